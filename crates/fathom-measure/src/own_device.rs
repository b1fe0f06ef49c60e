//! A device of the run's own (`--device-layer loop`): the data directory on an ext4 file system
//! in a loop device over an image file beside it. No other process uses that device, so a
//! device profile's rates can be written once in the root blkio group and hold every request
//! to it — the engine's, the kernel's writeback of its dirty pages and the file system's
//! journal — which a run's own blkio group on a shared disk cannot on cgroup v1. Where the
//! profile has a service time, the loop device is made over the image as `held_image` serves
//! it, so every request to the device also waits out the service time.

use crate::held_image::{self, HeldImage};
use crate::sample::Device;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tools a device of the run's own is made with (util-linux and e2fsprogs).
const TOOLS: [&str; 4] = ["losetup", "mkfs.ext4", "mount", "umount"];

/// Why a device of the run's own could not be had: a sentence.
pub type Why = String;

/// Why this host cannot give a run a device of its own, if it cannot.
pub fn check() -> Result<(), Why> {
    let why = Err;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return why("making a loop device and mounting it needs root".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return why("this kernel has no loop devices (/dev/loop-control is missing)".into());
    }
    if let Some(tool) = TOOLS.iter().find(|t| !on_path(t)) {
        return why(format!(
            "`{tool}` is not installed (scripts/setup.sh installs util-linux and e2fsprogs)"
        ));
    }
    Ok(())
}

fn on_path(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    std::env::split_paths(&path).any(|d| d.join(tool).is_file())
}

/// `DIR` with `suffix` on its name: the files a data directory's own device keeps beside it.
pub(crate) fn beside(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Where `held_image` serves the image of data directory `dir`: `DIR.held/`.
pub fn mount_of(dir: &Path) -> PathBuf {
    beside(dir, ".held")
}

/// The image file a data directory's own device lives in: `DIR.img` beside it.
pub fn image_of(dir: &Path) -> PathBuf {
    beside(dir, ".img")
}

/// Where the loop device a data directory's image is attached to is written down: `DIR.loop`
/// beside it. A served image's loop device outlives its server when the run is killed, and
/// sysfs then names its backing file by the served file's path inside the gone mount
/// (`/image`), which no data directory can be told from; this file says whose it is.
fn loop_note_of(dir: &Path) -> PathBuf {
    beside(dir, ".loop")
}

/// A data directory mounted on a loop device of its own, unmounted and detached when dropped
/// (its image removed unless kept).
#[derive(Debug)]
pub struct OwnDevice {
    dir: PathBuf,
    image: PathBuf,
    /// `/dev/loopN`.
    node: PathBuf,
    device: Device,
    keep: bool,
    /// The layer giving the device its service time, if the profile has one (dropped after
    /// the device is released).
    held: Option<HeldImage>,
}

/// A service time to give the device: each request held `us`, `depth` of them at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServiceTime {
    pub us: f64,
    pub depth: u32,
}

impl OwnDevice {
    /// Mounts `dir` on a loop device over `DIR.img`: the image an earlier run kept (a data
    /// directory kept for the next run), or a new sparse one as large as the space left on
    /// `dir`'s file system, made ext4; with `service`, over the image as a layer of fathom's
    /// own serves it, holding each request the service time.
    pub fn mount(dir: &Path, keep: bool, service: Option<ServiceTime>) -> Result<OwnDevice, Why> {
        release(dir);
        let image = image_of(dir);
        let fresh = !image.exists();
        if fresh && std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) {
            return Err(format!(
                "{} holds a database made without a device of its own; run it with \
                 `--device-layer group`",
                dir.display()
            ));
        }
        if fresh {
            let size = space_left(dir).map_err(failed("measure the space left on", dir))?;
            let file = std::fs::File::create(&image).map_err(failed("create", &image))?;
            file.set_len(size).map_err(failed("size", &image))?;
        }
        let mut held = match service {
            Some(s) => Some(HeldImage::start(&image, &mount_of(dir), s.us, s.depth)?),
            None => None,
        };
        let backing = held.as_ref().map_or(image.clone(), HeldImage::file);
        let attached = run("losetup", &["--find", "--show", "--direct-io=on"], &backing);
        let node = PathBuf::from(attached?.trim());
        let note = loop_note_of(dir);
        std::fs::write(&note, node.as_os_str().as_encoded_bytes())
            .map_err(failed("write", &note))?;
        if let (Some(held), Some(s)) = (held.as_mut(), service) {
            held.calibrate(&node, &image, fresh, s.us)?;
        }
        let own = OwnDevice {
            device: loop_device(&node)?,
            dir: dir.to_path_buf(),
            image,
            node,
            keep,
            held,
        };
        if fresh {
            // One inode a MiB and no lazy initialisation: no background writes of the file
            // system's own during the run's steps.
            let opts = ["-q", "-F", "-m", "0", "-i", "1048576", "-E"];
            let lazy = "lazy_itable_init=0,lazy_journal_init=0,nodiscard";
            let args: Vec<&str> = opts.iter().copied().chain([lazy]).collect();
            run("mkfs.ext4", &args, &own.node)?;
        }
        let (mode, owner) = std::fs::metadata(dir)
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.mode(), (m.uid(), m.gid()))
            })
            .map_err(failed("read", dir))?;
        let node = own.node.to_string_lossy().into_owned();
        run("mount", &[node.as_str()], dir)?;
        // The mount's root as the directory was, and empty for the engine (initdb and
        // mariadb-install-db refuse a directory holding lost+found).
        let _ = std::fs::remove_dir(dir.join("lost+found"));
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode));
        let _ = std::os::unix::fs::chown(dir, Some(owner.0), Some(owner.1));
        Ok(own)
    }

    /// The loop device, as the throttle and the samplers name it.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// `ext4 on /dev/loopN over IMAGE`.
    pub fn describe(&self) -> String {
        format!(
            "ext4 on {} over {}",
            self.node.display(),
            self.image.display()
        )
    }

    /// What the service-time layer did, if there is one: its hold, the read it measured and
    /// its CPU.
    pub fn describe_layer(&self) -> Option<String> {
        let held = self.held.as_ref()?;
        let measured = held.floor().map_or(String::new(), |f| {
            format!(
                "each request held {:.0} µs after it arrives, a 4 KiB read at queue depth 1 \
                 took {:.0} µs against the profile's {:.0}, ",
                f.hold_us, f.read_us, f.service_us
            )
        });
        Some(format!(
            "served by fathom's service-time layer: {measured}{:.1} CPU s and {:.0} MiB of \
             memory at most of its own",
            held.cpu_seconds(),
            held.peak_mib()
        ))
    }
}

impl Drop for OwnDevice {
    fn drop(&mut self) {
        let _ = release(&self.dir);
        if !self.keep {
            let _ = std::fs::remove_file(&self.image);
        }
    }
}

/// Unmounts `dir` if something is mounted there and detaches the loop devices over its image
/// (what a run killed before its cleanup left); returns the devices detached. The image stays.
pub fn release(dir: &Path) -> Vec<Device> {
    if is_mount_point(dir) {
        let lazy = run("umount", &[], dir).is_err();
        if lazy {
            let _ = run("umount", &["-l"], dir);
        }
    }
    let dir = &absolute(dir);
    let image = image_of(dir);
    let served = mount_of(dir);
    let files = [image, served.join(held_image::serve::FILE_NAME)];
    let mut nodes = loops_over(&files);
    // The loop the run wrote down, if its backing file is ours or a served file whose server
    // has gone (sysfs then names it `/image`).
    let note = loop_note_of(dir);
    let noted = std::fs::read_to_string(&note).ok().map(PathBuf::from);
    let gone = Path::new("/").join(held_image::serve::FILE_NAME);
    if let Some(node) = noted.filter(|n| !nodes.contains(n)) {
        let name = node.file_name().unwrap_or_default().to_string_lossy();
        if backing_file(&name).is_some_and(|b| b == gone || files.contains(&b)) {
            nodes.push(node);
        }
    }
    let mut detached = Vec::new();
    for node in nodes {
        let device = loop_device(&node);
        if run("losetup", &["-d"], &node).is_ok() {
            detached.extend(device.ok());
        }
    }
    let _ = std::fs::remove_file(&note);
    if is_mount_point(&served) {
        held_image::serve::detach(&served);
    }
    let _ = std::fs::remove_dir(&served);
    detached
}

/// `path` with its parent made absolute and resolved (as sysfs names a loop's backing file);
/// nothing under `path` is looked at, so a mount whose server has gone is no obstacle.
fn absolute(path: &Path) -> PathBuf {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let resolved = parent.unwrap_or(Path::new(".")).canonicalize();
    match (resolved, path.file_name()) {
        (Ok(p), Some(name)) => p.join(name),
        _ => path.to_path_buf(),
    }
}

/// The loop devices whose backing file is one of `files` (from sysfs: a file whose server
/// has gone cannot be looked at, but its name is still there).
fn loops_over(files: &[PathBuf]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let names: Vec<String> = (entries.flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("loop"))
        .collect();
    names
        .into_iter()
        .filter(|n| backing_file(n).is_some_and(|b| files.contains(&b)))
        .map(|n| PathBuf::from("/dev").join(n))
        .collect()
}

/// The backing file sysfs names for loop device `name` (`loop3`), if it is attached.
fn backing_file(name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    Some(PathBuf::from(text.trim()))
}

fn is_mount_point(dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mountinfo
        .lines()
        .filter_map(|l| l.split_whitespace().nth(4))
        .any(|m| Path::new(&unescape(m)) == dir)
}

/// A mountinfo path with its octal escapes (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let mut out = Vec::new();
    let b = field.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).and_then(|o| {
            let o = std::str::from_utf8(o).ok()?;
            u8::from_str_radix(o, 8).ok()
        });
        match (b[i], octal) {
            (b'\\', Some(c)) => {
                out.push(c);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The loop device's numbers from sysfs.
fn loop_device(node: &Path) -> Result<Device, Why> {
    let name = node.file_name().unwrap_or_default().to_string_lossy();
    let sys = PathBuf::from(format!("/sys/block/{name}/dev"));
    let numbers = std::fs::read_to_string(&sys).map_err(failed("read", &sys))?;
    let parsed = numbers
        .trim()
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    let (major, minor) =
        parsed.ok_or_else(|| format!("{} says `{}`", sys.display(), numbers.trim()))?;
    Ok(Device {
        major,
        minor,
        name: name.into_owned(),
    })
}

/// Bytes free to an unprivileged user on `dir`'s file system, less 5% for the host.
fn space_left(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: `c` is a valid C string and `st` a valid out-pointer for statvfs.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let bytes = st.f_bavail as u64 * st.f_frsize as u64;
    Ok(bytes / 20 * 19)
}

fn failed<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Why + 'a {
    move |cause| format!("cannot {action} {}: {cause}", path.display())
}

/// Runs `tool ARGS PATH` (no PATH if empty); its standard output, or why it failed.
fn run(tool: &str, args: &[&str], path: &Path) -> Result<String, Why> {
    let mut cmd = Command::new(tool);
    cmd.args(args);
    if !path.as_os_str().is_empty() {
        cmd.arg(path);
    }
    let out = cmd
        .output()
        .map_err(|cause| format!("cannot run `{tool}`: {cause}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{tool} {} {}` failed ({}): {}",
            args.join(" "),
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_sits_beside_its_directory() {
        assert_eq!(
            image_of(Path::new("/r/.data/x-c1.42")),
            Path::new("/r/.data/x-c1.42.img")
        );
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/a\\040b/c"), "/a b/c");
        assert_eq!(unescape("/plain"), "/plain");
    }
}
