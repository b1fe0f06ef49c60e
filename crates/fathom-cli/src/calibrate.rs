//! `fathom calibrate`: the data directory's device measured by fio at real-time priority and
//! kept in the results directory's `device.json`, for runs to judge their IO against.

use fathom_measure::device::{file_of, Calibration, DeviceFile, DeviceLimits, Figure};
use fathom_measure::sample::{identity, Device};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// The results directory whose `device.json` keeps the limits.
    #[arg(long, value_name = "DIR", default_value = "results")]
    results: PathBuf,
    /// A directory on the device to measure [default: RESULTS/.data, where runs put their
    /// databases].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Measure again even if `device.json` has this device's limits.
    #[arg(long)]
    again: bool,
    /// Seconds of each fio run.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Runs of each figure; the median is kept with the range.
    #[arg(long, default_value_t = 3)]
    repeats: u32,
    /// The test file's size, MiB.
    #[arg(long, default_value_t = 1024)]
    size_mib: u64,
    /// Measure the device as a run under this device profile sees it (`gp3`, or a profile
    /// file: see `fathom run --device`): fio runs held to the profile, and nothing is kept.
    #[arg(long, value_name = "PROFILE|FILE.toml")]
    device: Option<String>,
    /// How `--device` is imposed, as `fathom run --device-layer` says [default: loop].
    #[arg(long, value_name = "loop|group")]
    device_layer: Option<fathom_schema::result::device::DeviceLayer>,
}

pub fn run(args: &CalibrateArgs) -> anyhow::Result<()> {
    if !(args.seconds > 0.0 && args.repeats > 0 && args.size_mib > 0) {
        anyhow::bail!("--seconds, --repeats and --size-mib: each more than 0");
    }
    // The results directory is made first, as `run` makes its own: a measurement must not end
    // with nowhere to keep it.
    std::fs::create_dir_all(&args.results)
        .map_err(|e| anyhow::anyhow!("--results: creating {}: {e}", args.results.display()))?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| args.results.join(".data"));
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    if let Some(given) = &args.device {
        return under_profile(args, given, &dir);
    }
    let path = file_of(&args.results);
    let mut file = DeviceFile::load(&path)?;
    let device = Device::of(&dir).ok_or_else(|| {
        anyhow::anyhow!(
            "{}: on no block device listed in /proc/diskstats (tmpfs or overlay?): nothing to calibrate",
            dir.display()
        )
    })?;
    let model = identity::disk_model(&device.name);
    if !args.again {
        if let Some(kept) = file.find(&device, model.as_deref()) {
            print(kept);
            eprintln!(
                "kept in {} since {}; `fathom calibrate --again` measures again",
                path.display(),
                kept.measured_at
            );
            return Ok(());
        }
    }
    eprintln!(
        "calibrate: {} ({}) in {}, {} s x {} of each figure",
        device.name,
        model.as_deref().unwrap_or("model unknown"),
        dir.display(),
        args.seconds,
        args.repeats
    );
    let limits = calibration(args, &dir)
        .run(|f: &Figure| eprintln!("  {:<14} {:>10.0} {}", f.name, f.median, f.unit))?;
    print(&limits);
    file.keep(limits, &path)?;
    eprintln!("kept in {}", path.display());
    Ok(())
}

/// The fio runs `args` ask for, in `dir`.
fn calibration<'a>(args: &CalibrateArgs, dir: &'a std::path::Path) -> Calibration<'a> {
    Calibration {
        dir,
        seconds_each: args.seconds,
        repeats: args.repeats,
        file_mib: args.size_mib,
    }
}

/// `--device`: the calibration's fio runs held to a profile (fathom joins its group, so fio
/// does too), printed beside the profile's own figures, kept nowhere.
fn under_profile(args: &CalibrateArgs, given: &str, dir: &std::path::Path) -> anyhow::Result<()> {
    use fathom_schema::result::device::DeviceLayer;
    let mut profile =
        fathom_run::device_profile::find(given, std::path::Path::new("."), "--device")?;
    profile.layer = args.device_layer.unwrap_or(DeviceLayer::Loop);
    fathom_measure::throttle::check(dir, &profile).map_err(|e| anyhow::anyhow!("--device: {e}"))?;
    // A device of its own is mounted on a directory of its own, gone when it is.
    let own_dir = dir.join(format!("calibrate.{}", std::process::id()));
    let dir = match profile.layer {
        DeviceLayer::Loop => {
            std::fs::create_dir_all(&own_dir)
                .map_err(|e| anyhow::anyhow!("creating {}: {e}", own_dir.display()))?;
            own_dir.as_path()
        }
        DeviceLayer::Group => dir,
    };
    let throttle = fathom_measure::throttle::DeviceThrottle::create(
        &profile,
        dir,
        &[std::process::id()],
        false,
    )?;
    eprintln!(
        "calibrate: {} in {} under device profile {}, {} s x {} of each figure",
        throttle.disk().name,
        dir.display(),
        profile.describe(),
        args.seconds,
        args.repeats
    );
    let expected = throttle.limits();
    let limits = calibration(args, dir).run(|f: &Figure| {
        let want = expected.get(&f.name).map_or(f64::NAN, |e| e.median);
        eprintln!(
            "  {:<14} {:>10.0} {:<6} profile {:>8.0} ({:+.1}%)",
            f.name,
            f.median,
            f.unit,
            want,
            100.0 * (f.median / want - 1.0)
        )
    })?;
    eprintln!("calibrate: {}", throttle.describe());
    drop(throttle);
    let _ = std::fs::remove_dir(&own_dir);
    print(&limits);
    eprintln!("under a profile nothing is kept in device.json (the device's own limits stay)");
    Ok(())
}

fn print(d: &DeviceLimits) {
    println!(
        "{} ({}), measured {} by {}{}",
        d.device,
        d.disk_model.as_deref().unwrap_or("model unknown"),
        d.measured_at,
        d.fio,
        if d.realtime {
            " at real-time priority"
        } else {
            ""
        }
    );
    println!(
        "{:<14} {:>10} {:>6} {:>10} {:>10}",
        "figure", "median", "unit", "low", "high"
    );
    for f in &d.figures {
        println!(
            "{:<14} {:>10.0} {:>6} {:>10.0} {:>10.0}",
            f.name, f.median, f.unit, f.low, f.high
        );
    }
    for n in &d.notes {
        println!("note: {n}");
    }
}
