//! What the page draws: line and bar charts as SVG (`svg`), a step's latency over time with
//! the engine's events and its slowest operations (`timeline`) and flame graphs (`flame`), from
//! figures the sections hand them; nothing here reads results.

pub mod flame;
pub mod svg;
pub mod timeline;
