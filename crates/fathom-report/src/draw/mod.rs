//! What the page draws: line and bar charts as SVG (`svg`) and flame graphs (`flame`), from
//! figures the sections hand them; nothing here reads results.

pub mod flame;
pub mod svg;
