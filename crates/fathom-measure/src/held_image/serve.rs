//! The file system that serves a held image (`fathom held-image`, run by fathom itself): one
//! file, `image`, whose every read, write and sync is done on the real image with O_DIRECT and
//! answered no sooner than the hold after it arrived, up to the profile's queue depth at once.
//! A loop device over that file gives the run's device the profile's service time.

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    InitFlags, KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyWrite, Request, SessionACL, WriteFlags,
};
use std::ffi::OsStr;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

/// The one file's name in the mount.
pub const FILE_NAME: &str = "image";

const ROOT: u64 = 1;
const FILE: u64 = 2;
/// Attributes never change while the image is served.
const TTL: Duration = Duration::from_secs(86_400);
/// The largest request the kernel sends (it splits larger ones).
const MAX_REQUEST: u32 = 1 << 20;

/// The image served, and how long each request is held (ns, changed while serving).
struct HeldFile {
    image: std::fs::File,
    size: u64,
    hold_ns: Arc<AtomicU64>,
}

impl HeldFile {
    fn attr(&self, ino: u64) -> FileAttr {
        let dir = ino == ROOT;
        FileAttr {
            ino: INodeNo(ino),
            size: if dir { 0 } else { self.size },
            blocks: if dir { 0 } else { self.size / 512 },
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind: if dir {
                FileType::Directory
            } else {
                FileType::RegularFile
            },
            perm: if dir { 0o755 } else { 0o600 },
            nlink: 1,
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        }
    }

    /// Waits out what is left of the hold of a request that arrived at `arrived`.
    fn hold(&self, arrived: Instant) {
        let hold = Duration::from_nanos(self.hold_ns.load(Ordering::Relaxed));
        let left = hold.saturating_sub(arrived.elapsed());
        if !left.is_zero() {
            std::thread::sleep(left);
        }
    }
}

/// A page-aligned buffer, as O_DIRECT wants, kept per serving thread.
#[repr(C, align(4096))]
struct Page([u8; 4096]);

thread_local! {
    static BUFFER: std::cell::RefCell<Vec<Page>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on an aligned buffer of `len` bytes.
fn with_buffer<T>(len: usize, f: impl FnOnce(&mut [u8]) -> T) -> T {
    BUFFER.with(|b| {
        let mut pages = b.borrow_mut();
        let need = len.div_ceil(4096);
        if pages.len() < need {
            pages.resize_with(need, || Page([0; 4096]));
        }
        // SAFETY: `pages` holds at least `len` initialised bytes, contiguous (Page is
        // `repr(C)` with no padding), and is borrowed mutably for the call.
        let bytes = unsafe { std::slice::from_raw_parts_mut(pages.as_mut_ptr().cast(), len) };
        f(bytes)
    })
}

fn errno(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

impl Filesystem for HeldFile {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Direct requests sent asynchronously, as many at once as the loop device has.
        let _ = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO);
        let _ = config.set_max_background(256);
        let _ = config.set_max_write(MAX_REQUEST);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if u64::from(parent) == ROOT && name == OsStr::new(FILE_NAME) {
            reply.entry(&TTL, &self.attr(FILE), Generation(0));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match u64::from(ino) {
            i @ (ROOT | FILE) => reply.attr(&TTL, &self.attr(i)),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        // No page cache for the image: every request the loop device makes reaches us.
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let arrived = Instant::now();
        with_buffer(size as usize, |buf| match self.image.read_at(buf, offset) {
            Ok(n) => {
                self.hold(arrived);
                reply.data(&buf[..n]);
            }
            Err(e) => reply.error(errno(&e)),
        });
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let arrived = Instant::now();
        with_buffer(data.len(), |buf| {
            buf.copy_from_slice(data);
            match self.image.write_at(buf, offset) {
                Ok(n) => {
                    self.hold(arrived);
                    reply.written(n as u32);
                }
                Err(e) => reply.error(errno(&e)),
            }
        });
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _data: bool,
        reply: ReplyEmpty,
    ) {
        let arrived = Instant::now();
        match self.image.sync_data() {
            Ok(()) => {
                self.hold(arrived);
                reply.ok();
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lo: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }
}

/// Serves `image` as `MOUNT/image`, each request held `hold_us` at first, with `depth`
/// requests at once, until standard input ends; each line read from it meanwhile is a new
/// hold in nanoseconds. Unmounts and exits the process when standard input ends.
pub fn serve(image: &Path, mount: &Path, hold_us: f64, depth: usize) -> anyhow::Result<()> {
    use anyhow::Context;
    // Ctrl-C goes to the run, which releases the device first: the layer under it must
    // outlive that, and ends when the run closes its standard input.
    // SAFETY: setting SIGINT to be ignored has no preconditions.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    // Timer slack off: a hold of 50 µs must not wake 50 µs late (threads inherit it).
    // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64) };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(image)
        .with_context(|| format!("cannot open {} for direct IO", image.display()))?;
    let size = file.metadata()?.len();
    let hold_ns = Arc::new(AtomicU64::new((hold_us * 1000.0) as u64));
    let held = HeldFile {
        image: file,
        size,
        hold_ns: hold_ns.clone(),
    };
    let unmount = mount.to_path_buf();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            match line.ok().and_then(|l| l.trim().parse().ok()) {
                Some(ns) => hold_ns.store(ns, Ordering::Relaxed),
                None => break,
            }
        }
        detach(&unmount);
        std::process::exit(0);
    });
    let mut config = Config::default();
    config.mount_options = vec![fuser::MountOption::FSName("fathom-held-image".into())];
    config.acl = SessionACL::All;
    config.n_threads = Some(depth.max(1));
    fuser::mount(held, mount, &config)
        .with_context(|| format!("cannot serve {} at {}", image.display(), mount.display()))
}

/// Unmounts `mount` lazily (what a request still in flight holds goes when it ends).
pub fn detach(mount: &Path) {
    use std::os::unix::ffi::OsStrExt;
    if let Ok(c) = std::ffi::CString::new(mount.as_os_str().as_bytes()) {
        // SAFETY: `c` is a valid C string.
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    }
}
