//! How two sides' runs were laid out in time, which decides how they are judged. Runs of both
//! sides in the same rounds of one experiment are pairs: whatever drifted between rounds (the
//! host, the page cache, the hour) moved both runs of a round, and cancels in the round's
//! ratio. Runs that are not paired are judged unpaired (Welch), and sides whose runs do not
//! interleave in time at all are said to have run apart: whatever changed between the two
//! times counts as a difference between the setups.

use fathom_schema::result::{parse_utc_timestamp, RunManifest};
use serde::Serialize;

/// How a comparison's runs are judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Each round's two runs as a pair: a one-sample t test on the rounds' log ratios.
    Paired,
    /// The two sides' runs as two samples: Welch's t test on their logarithms.
    #[default]
    Unpaired,
    /// Sides that ran apart, NEW's runs judged against the base's history in a results store
    /// (`verdict::history`).
    History,
}

/// Whether the two sides' runs interleave in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// Some run of each side ran between runs of the other (or their times are unknown).
    #[default]
    Interleaved,
    /// Every run of one side ran before every run of the other: another session, or an
    /// experiment whose order ran each setup's repeats in a block.
    Apart,
}

/// One repeat of a step as the design sees it: its run's round and when the run ran.
#[derive(Clone, Debug, Default)]
pub struct Placed {
    /// The experiment's definition and the repeat, when an experiment ran it.
    pub round: Option<(String, usize)>,
    /// When the run started and finished, Unix seconds.
    pub span: Option<(u64, u64)>,
    /// Its place among its round's setups, from 1, when recorded.
    pub place: Option<usize>,
}

impl Placed {
    pub fn of(m: &RunManifest) -> Placed {
        let round = m.experiment.as_ref().map(|e| {
            let definition = if e.definition.is_empty() {
                e.name.clone()
            } else {
                e.definition.clone()
            };
            (definition, e.repeat)
        });
        let start = parse_utc_timestamp(&m.started_at);
        let finish = m.finished_at.as_deref().and_then(parse_utc_timestamp);
        Placed {
            round,
            span: start.map(|s| (s, finish.unwrap_or(s).max(s))),
            place: m.experiment.as_ref().and_then(|e| e.place),
        }
    }
}

/// The design two sides' repeats are judged by: paired by round, with the (base, new)
/// indexes of each pair in round order, or unpaired; and whether the sides ran apart.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub design: Design,
    pub pairs: Vec<(usize, usize)>,
    /// Repeats left out because the other side has none in their round.
    pub unpaired_left_out: usize,
    pub timing: Timing,
}

impl Layout {
    /// The test of one figure of the two sides' repeats (in the order the layout was made
    /// of): over the pairs, or Welch's over every repeat.
    pub fn test(&self, base: &[f64], new: &[f64]) -> Option<super::LogRatio> {
        match self.design {
            Design::Paired => super::LogRatio::paired(
                &self
                    .pairs
                    .iter()
                    .map(|&(i, j)| (base[i], new[j]))
                    .collect::<Vec<_>>(),
            ),
            Design::Unpaired | Design::History => super::LogRatio::of(base, new),
        }
    }

    /// What going second in a round did to a run, from pairs of one figure whose two setups
    /// took both orders (fewer than two rounds of each, or unknown places: `None`): the ratio
    /// of a run's figure when second to when first, and its 95% interval, from the rounds'
    /// log ratios against which setup went second (least squares with an intercept, n − 2
    /// degrees of freedom). Rotated orders cancel it in the verdict's ratio, but it widens the
    /// verdict's interval, and a reader wants to know it is there.
    pub fn order_effect(
        &self,
        base: &[f64],
        new: &[f64],
        placed: (&[Placed], &[Placed]),
    ) -> Option<(f64, f64, f64)> {
        if self.design != Design::Paired {
            return None;
        }
        // (s, d): s +1 where NEW went second, −1 where it went first; d the round's log ratio.
        let mut points: Vec<(f64, f64)> = Vec::new();
        for &(i, j) in &self.pairs {
            let (pb, pn) = (placed.0[i].place?, placed.1[j].place?);
            if pb == pn || base[i] <= 0.0 || new[j] <= 0.0 {
                return None;
            }
            let s = if pn > pb { 1.0 } else { -1.0 };
            points.push((s, new[j].ln() - base[i].ln()));
        }
        let seconds = points.iter().filter(|p| p.0 > 0.0).count();
        if seconds < 2 || points.len() - seconds < 2 {
            return None;
        }
        let n = points.len() as f64;
        let (ms, md) = (
            points.iter().map(|p| p.0).sum::<f64>() / n,
            points.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sxx: f64 = points.iter().map(|p| (p.0 - ms).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| (p.0 - ms) * (p.1 - md)).sum();
        let slope = sxy / sxx;
        let residual: f64 = points
            .iter()
            .map(|p| (p.1 - md - slope * (p.0 - ms)).powi(2))
            .sum();
        let se = (residual / (n - 2.0) / sxx).sqrt();
        let half = crate::student::quantile(0.975, n - 2.0) * se;
        // A round's log ratio is μ + o·s, o the log of what going second does to a run: NEW's
        // loss when it goes second, BASE's (raising the ratio) when BASE does.
        Some((slope.exp(), (slope - half).exp(), (slope + half).exp()))
    }

    /// How many rounds the test judges: the pairs, or the smaller side.
    pub fn rounds(&self, base: usize, new: usize) -> usize {
        match self.design {
            Design::Paired => self.pairs.len(),
            Design::Unpaired | Design::History => base.min(new),
        }
    }
}

/// The layout of `base` and `new` repeats: paired when both sides' repeats come from rounds of
/// one experiment, at least `min` rounds hold a repeat of each, and those rounds are blocks of
/// time (each round's two runs ran after every run of the rounds before it); else unpaired.
pub fn layout(base: &[Placed], new: &[Placed], min: usize) -> Layout {
    let timing = timing(base, new);
    let unpaired = Layout {
        design: Design::Unpaired,
        pairs: Vec::new(),
        unpaired_left_out: 0,
        timing,
    };
    let Some(pairs) = rounds(base, new) else {
        return unpaired;
    };
    if pairs.len() < min || !blocks(&pairs, base, new) {
        return unpaired;
    }
    Layout {
        design: Design::Paired,
        unpaired_left_out: base.len() + new.len() - 2 * pairs.len(),
        pairs,
        timing,
    }
}

/// The (base, new) indexes of the rounds both sides have, in round order; `None` when a repeat
/// is from no experiment, the two sides' experiments differ, or a side has a round twice.
fn rounds(base: &[Placed], new: &[Placed]) -> Option<Vec<(usize, usize)>> {
    let definition = &base.first()?.round.as_ref()?.0;
    let of = |side: &[Placed]| -> Option<Vec<usize>> {
        let mut repeats = Vec::new();
        for p in side {
            let (d, r) = p.round.as_ref()?;
            if d != definition || repeats.contains(r) {
                return None;
            }
            repeats.push(*r);
        }
        Some(repeats)
    };
    let (b, n) = (of(base)?, of(new)?);
    let mut pairs: Vec<(usize, usize, usize)> = b
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((*r, i, n.iter().position(|x| x == r)?)))
        .collect();
    pairs.sort();
    Some(pairs.into_iter().map(|(_, i, j)| (i, j)).collect())
}

/// Whether each pair's two runs ran after every run of the pairs before it: the rounds are
/// blocks of time. A run's time is known to the second, so a round may start in the second
/// the one before it ended.
fn blocks(pairs: &[(usize, usize)], base: &[Placed], new: &[Placed]) -> bool {
    let mut ended = 0;
    for &(i, j) in pairs {
        let (Some(a), Some(b)) = (base[i].span, new[j].span) else {
            return false;
        };
        if a.0.min(b.0) < ended {
            return false;
        }
        ended = a.1.max(b.1);
    }
    true
}

/// Whether every run of one side ran before every run of the other.
fn timing(base: &[Placed], new: &[Placed]) -> Timing {
    let span = |side: &[Placed]| -> Option<(u64, u64)> {
        let spans: Vec<(u64, u64)> = side.iter().map(|p| p.span).collect::<Option<_>>()?;
        Some((
            spans.iter().map(|s| s.0).min()?,
            spans.iter().map(|s| s.1).max()?,
        ))
    };
    match (span(base), span(new)) {
        (Some(b), Some(n)) if b.1 <= n.0 || n.1 <= b.0 => Timing::Apart,
        _ => Timing::Interleaved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(definition: &str, repeat: usize, start: u64, end: u64) -> Placed {
        Placed {
            round: Some((definition.into(), repeat)),
            span: Some((start, end)),
            place: None,
        }
    }

    /// Rounds in rotated order whose second run is 10% slower: the order effect reads 0.90,
    /// and a change in the ratio does not move it.
    #[test]
    fn the_order_effect_is_read_from_rotated_rounds() {
        let placed = |place: [usize; 4]| -> Vec<Placed> {
            (0..4)
                .map(|r| Placed {
                    place: Some(place[r]),
                    ..at("e", r + 1, 20 * r as u64, 20 * r as u64 + 10)
                })
                .collect()
        };
        let (pb, pn) = (placed([1, 2, 1, 2]), placed([2, 1, 2, 1]));
        let l = layout(&pb, &pn, 3);
        let noise = [1.0, 1.01, 0.99, 1.0];
        let base: Vec<f64> = (0..4)
            .map(|r| if pb[r].place == Some(2) { 90.0 } else { 100.0 } * noise[r])
            .collect();
        let new: Vec<f64> = (0..4)
            .map(|r| if pn[r].place == Some(2) { 99.0 } else { 110.0 } * noise[r])
            .collect();
        let (effect, lo, hi) = l
            .order_effect(&base, &new, (&pb, &pn))
            .expect("both orders twice");
        assert!(
            (effect - 0.9).abs() < 1e-9 && lo <= effect && effect <= hi,
            "{effect} {lo} {hi}"
        );
        let ratio = l.test(&base, &new).unwrap().ratio();
        assert!((ratio - 1.1).abs() < 1e-9, "{ratio}");
        // One order only: nothing to read it from.
        assert_eq!(l.order_effect(&base, &new, (&pb, &pb)), None);
    }

    /// Rounds of one experiment run one after another are pairs; a round only one side has is
    /// left out; setups run in blocks (every repeat of one, then the other's) are not.
    #[test]
    fn rounds_in_time_are_pairs() {
        let base = [at("e", 1, 0, 10), at("e", 2, 20, 30), at("e", 3, 40, 50)];
        let new = [at("e", 1, 10, 20), at("e", 2, 30, 40), at("e", 3, 50, 60)];
        let l = layout(&base, &new, 3);
        assert_eq!(l.design, Design::Paired);
        assert_eq!(l.pairs, vec![(0, 0), (1, 1), (2, 2)]);
        assert_eq!(l.timing, Timing::Interleaved);
        // A fourth base round without its new run: left out, still paired.
        let mut more = base.to_vec();
        more.push(at("e", 4, 60, 70));
        let l = layout(&more, &new, 3);
        assert_eq!((l.design, l.unpaired_left_out), (Design::Paired, 1));
        // Too few rounds in common for a verdict: unpaired.
        assert_eq!(layout(&base[..2], &new, 3).design, Design::Unpaired);
        // Each setup's repeats in a block: round 1's pair spans round 2's base run.
        let blocked = [at("e", 1, 60, 70), at("e", 2, 70, 80), at("e", 3, 80, 90)];
        let l = layout(&base, &blocked, 3);
        assert_eq!((l.design, l.timing), (Design::Unpaired, Timing::Apart));
        // Two experiments, or a run of none.
        let other = [at("f", 1, 10, 20), at("f", 2, 30, 40), at("f", 3, 50, 60)];
        assert_eq!(layout(&base, &other, 3).design, Design::Unpaired);
        let mut loose = new.to_vec();
        loose[1].round = None;
        assert_eq!(layout(&base, &loose, 3).design, Design::Unpaired);
    }

    /// The same experiment run on two nights into two directories: its rounds' numbers match,
    /// but the nights are not rounds.
    #[test]
    fn two_sessions_of_one_experiment_are_not_paired() {
        let night = |t: u64| {
            [
                at("e", 1, t, t + 9),
                at("e", 2, t + 20, t + 29),
                at("e", 3, t + 40, t + 49),
            ]
        };
        let l = layout(&night(0), &night(86_400), 3);
        assert_eq!((l.design, l.timing), (Design::Unpaired, Timing::Apart));
    }
}
