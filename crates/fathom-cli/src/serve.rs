//! `fathom serve`: starts a server engine from a setup exactly as `fathom run` would, prints
//! how to reach it (URL and pid), and keeps it up until Ctrl-C — so another tool (the real
//! sysbench) and fathom runs pointed at it with `--set url=... --set pid=...` measure the same
//! server and the same tables.

use anyhow::Context;
use clap::Args;
use fathom_api::family::Engine;
use fathom_engines::EngineConfig;
use fathom_measure::cgroup::MemoryLimit;
use fathom_run::{DriveInput, Keys, SetupInput};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct ServeArgs {
    /// A server engine (`fathom engines` lists them).
    #[arg(long)]
    pub engine: String,
    /// The server's own settings (my.cnf or postgresql.conf lines); `@FILE` reads them.
    #[arg(long, value_name = "LINES|@FILE")]
    pub setup: Option<String>,
    /// fathom's engine settings, KEY=VALUE, repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Where the server's data directory goes (created; must be empty).
    #[arg(long, value_name = "DIR")]
    pub data_dir: PathBuf,
    /// Limit the server's memory, page cache included (e.g. 256m).
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<fathom_api::knobs::Size>,
    /// Serve over TCP as a run's network profile makes it (`loopback-tcp`, `namespace`,
    /// `same-az`, ...: `fathom networks`); the URL printed is then the TCP one.
    #[arg(long, value_name = "PROFILE|FILE.toml")]
    pub network: Option<String>,
    /// Also write the URL to this file once the server is ready (for scripts).
    #[arg(long, value_name = "FILE")]
    pub url_file: Option<PathBuf>,
}

/// Prints how to reach the server (its URL, its pids, its network namespace's file when it has
/// one, a `fathom run` line) and writes them to `url_file` for scripts (a line each, URL, pids,
/// the namespace's file), whole or not at all.
fn announce(
    entry: &fathom_engines::EngineEntry,
    engine: &Engine,
    netns: Option<&std::path::Path>,
    url_file: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let url = engine.url().unwrap_or_default();
    let pids: Vec<String> = engine.target().pids().iter().map(u32::to_string).collect();
    let pid = pids.join(",");
    println!("url {url}");
    println!("pid {pid}");
    // A client host of its own joins the server's namespace by its file.
    let (netns_line, host) = match netns {
        Some(ns) => {
            println!("netns {}", ns.display());
            (
                format!("{}\n", ns.display()),
                format!(" --host-namespace {}", ns.display()),
            )
        }
        None => Default::default(),
    };
    let workload = if entry.family() == fathom_api::family::Family::Doc {
        "linkbench"
    } else {
        "sysbench"
    };
    println!(
        "fathom run --engine {} --set 'url={url}' --set pid={pid}{host} --workload {workload} ...",
        entry.name
    );
    if let Some(f) = url_file {
        // Written beside it and renamed, so a script that waits for the file to exist never
        // reads it half written.
        let name = f
            .file_name()
            .map_or("url".into(), |n| n.to_string_lossy().into_owned());
        let partial = f.with_file_name(format!(".{name}.partial"));
        std::fs::write(&partial, format!("{url}\n{pid}\n{netns_line}"))
            .and_then(|()| std::fs::rename(&partial, f))
            .with_context(|| format!("writing {}", f.display()))?;
    }
    Ok(())
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let settings =
        fathom_api::units::parse_key_values(&args.settings, "--set").map_err(anyhow::Error::msg)?;
    let setup = fathom_run::resolve_setup(
        &SetupInput {
            engine: args.engine.clone(),
            options: args.setup.clone().unwrap_or_default(),
            settings,
            ..SetupInput::default()
        },
        &DriveInput {
            memory_limit: args.memory_limit.clone(),
            network: args.network.clone(),
            ..DriveInput::default()
        },
        &Keys::Flags,
        std::path::Path::new("."),
    )?;
    let entry = setup.engine;
    if !entry.server {
        anyhow::bail!(
            "engine `{}` is not a server; `fathom serve` starts {}",
            entry.name,
            fathom_engines::servers().join(", ")
        );
    }
    if args.data_dir.exists() && std::fs::read_dir(&args.data_dir)?.next().is_some() {
        anyhow::bail!("--data-dir {} is not empty", args.data_dir.display());
    }
    std::fs::create_dir_all(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    let limit = setup
        .memory_limit
        .map(|bytes| MemoryLimit::create(bytes, &[]))
        .transpose()?;
    let stop = crate::interrupt::install_handler(crate::interrupt::SERVE);
    let mut network = (setup.network.as_ref())
        .map(|n| fathom_run::network::RunNetwork::start(n, &args.data_dir))
        .transpose()?
        .flatten();
    let engine = fathom_engines::open(
        entry,
        &EngineConfig {
            data_dir: args.data_dir.clone(),
            options: setup.options,
            settings: setup.settings,
            groups: limit.iter().map(|l| l.procs_file()).collect(),
            stop: stop.clone(),
            network: network.as_ref().and_then(|n| n.path.clone()),
        },
    )?;
    if let Some(n) = &mut network {
        n.settle()?;
        eprintln!("fathom: {}", n.describe());
    }
    let netns = network.as_ref().and_then(|n| n.namespace_file());
    announce(entry, &engine, netns.as_deref(), args.url_file.as_deref())?;
    let target = engine.target();
    eprintln!(
        "fathom: {} {} is up; Ctrl-C stops it",
        entry.name,
        target.version()
    );
    while !stop.requested() {
        target.check()?;
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("fathom: stopping {}", entry.name);
    drop(engine);
    drop(network);
    drop(limit);
    Ok(())
}
