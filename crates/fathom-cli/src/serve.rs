//! `fathom serve`: starts a server engine from a setup exactly as `fathom run` would, prints
//! how to reach it (URL and pid), and keeps it up until Ctrl-C — so another tool (the real
//! sysbench) and fathom runs pointed at it with `--set url=... --set pid=...` measure the same
//! server and the same tables.

use crate::execute::{install_interrupt_handler, read_options_file};
use anyhow::Context;
use clap::Args;
use fathom_core::cgroup::MemoryLimit;
use fathom_core::family::Engine;
use fathom_core::{interrupt, units};
use fathom_engines::EngineConfig;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct ServeArgs {
    /// A server engine: innodb, myrocks, postgres.
    #[arg(long)]
    pub engine: String,
    /// The server's own settings (my.cnf or postgresql.conf lines); `@FILE` reads them.
    #[arg(long)]
    pub setup: Option<String>,
    /// fathom's engine settings, KEY=VALUE, repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Where the server's data directory goes (created; must be empty).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Limit the server's memory, page cache included (e.g. 256m).
    #[arg(long)]
    pub memory_limit: Option<String>,
    /// Also write the URL to this file once the server is ready (for scripts).
    #[arg(long)]
    pub url_file: Option<PathBuf>,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let entry = fathom_engines::find(&args.engine)?;
    if !entry.server {
        anyhow::bail!(
            "engine `{}` is not a server; `fathom serve` starts innodb, myrocks or postgres",
            entry.name
        );
    }
    let options = match args.setup.as_deref().map(|s| (s, s.strip_prefix('@'))) {
        Some((_, Some(file))) => read_options_file(file.as_ref(), entry)?,
        Some((s, None)) => s.to_string(),
        None => String::new(),
    };
    let settings =
        units::parse_key_values(&args.settings, "setting").map_err(anyhow::Error::msg)?;
    if args.data_dir.exists() && std::fs::read_dir(&args.data_dir)?.next().is_some() {
        anyhow::bail!("--data-dir {} is not empty", args.data_dir.display());
    }
    std::fs::create_dir_all(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    let limit = args
        .memory_limit
        .as_deref()
        .map(|l| -> anyhow::Result<MemoryLimit> {
            let bytes = units::parse_size(l).map_err(|e| anyhow::anyhow!("--memory-limit: {e}"))?;
            Ok(MemoryLimit::create(bytes, &[])?)
        })
        .transpose()?;
    install_interrupt_handler();
    let engine = fathom_engines::open(
        entry,
        &EngineConfig {
            data_dir: args.data_dir.clone(),
            options,
            settings,
            memory_group: limit.as_ref().map(|l| l.procs_file()),
        },
    )?;
    let Engine::Sql(sql) = &engine else {
        anyhow::bail!("engine `{}` is not a sql engine", entry.name);
    };
    let url = sql.url().unwrap_or_default();
    let pid = sql.pids().first().copied().unwrap_or(0);
    println!("url {url}");
    println!("pid {pid}");
    println!(
        "fathom run --engine {} --set 'url={url}' --set pid={pid} --workload sysbench ...",
        entry.name
    );
    if let Some(f) = &args.url_file {
        std::fs::write(f, format!("{url}\n{pid}\n"))
            .with_context(|| format!("writing {}", f.display()))?;
    }
    eprintln!(
        "fathom: {} {} is up; Ctrl-C stops it",
        entry.name,
        sql.version()
    );
    while !interrupt::requested() {
        sql.check()?;
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("fathom: stopping {}", entry.name);
    drop(engine);
    drop(limit);
    Ok(())
}
