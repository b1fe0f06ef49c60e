//! What each client of a declared workload's step is given: how record numbers become keys,
//! the fields and their bytes, and a phase's operation choices (its mix, its record chooser
//! with YCSB's constants, its scan lengths, its share of a counted phase).

use super::file::{Distribution, InsertOrder, KeyFormat, LengthDistribution, Mix, Phase};
use super::gen::{Chooser, Length};
use super::ops::{self, Plan};
use super::record::{Fields, KeyForm, Keys};
use super::Declared;
use crate::sysbench::rand as sb;
use fathom_api::step::ClientGroup;

impl Declared {
    pub(super) fn keys(&self) -> Keys {
        let d = &self.loaded.file.data;
        let form = match d.key_format.get_ref() {
            KeyFormat::Ycsb => KeyForm::Ycsb {
                prefix: d.key_prefix.clone(),
                zero_padding: d.zero_padding as usize,
            },
            KeyFormat::Binary => KeyForm::Binary {
                size: d.key_size.as_ref().map_or(16, |k| *k.get_ref() as usize),
            },
        };
        Keys {
            hashed: d.insert_order == InsertOrder::Hashed,
            form,
        }
    }

    pub(super) fn fields(&self) -> Fields {
        let d = &self.loaded.file.data;
        let max = *d.field_length.get_ref();
        let length = match d.field_length_distribution.get_ref() {
            LengthDistribution::Constant => Length::Constant(max),
            LengthDistribution::Uniform => Length::uniform(d.min_field_length, max),
            LengthDistribution::Zipfian => Length::zipfian(d.min_field_length, max),
            LengthDistribution::Histogram => {
                let h = d
                    .field_length_histogram
                    .as_ref()
                    .expect("checked")
                    .get_ref();
                Length::histogram(h.block_size, h.buckets.clone())
            }
        };
        let fields = Fields::new(&d.field_prefix, *d.fields.get_ref() as usize, length);
        match &d.compression_ratio {
            Some(r) => fields.compressible(*r.get_ref()),
            None => fields,
        }
    }

    /// Phase `i`'s choices for client `c` of the step's, its share of `operations`.
    pub(super) fn plan(
        &self,
        i: usize,
        c: usize,
        groups: &[ClientGroup],
        operations: Option<u64>,
    ) -> Plan {
        let ph = &self.loaded.file.phases[i];
        // The client's group, and its place among the group's clients.
        let (mut g, mut k) = (0, c);
        while g + 1 < groups.len() && k >= groups[g].clients {
            k -= groups[g].clients;
            g += 1;
        }
        let clients = groups.get(g).map_or(1, |x| x.clients.max(1));
        let mix: &Mix = ph.groups()[g].2;
        let weights = mix.weights();
        let sum: f64 = weights.iter().sum();
        let mut cumulative = [0.0; 6];
        let mut acc = 0.0;
        for (slot, w) in cumulative.iter_mut().zip(weights) {
            acc += w / sum;
            *slot = acc;
        }
        let records = self.records;
        // YCSB's zipfian spreads over the records and the inserts it expects (twice the
        // phase's share of inserts, its "fudge factor"), so new records do not move which keys
        // are popular.
        let expected_inserts = operations.map_or(0, |o| (o as f64 * weights[2] / sum * 2.0) as u64);
        let chooser = chooser(ph, records, expected_inserts);
        let max = *ph.max_scan_length.get_ref();
        let scan_length = match ph.scan_length_distribution {
            LengthDistribution::Constant => Length::Constant(max),
            LengthDistribution::Uniform => Length::uniform(ph.min_scan_length, max),
            LengthDistribution::Zipfian => Length::zipfian(ph.min_scan_length, max),
            LengthDistribution::Histogram => unreachable!("refused by the file's check"),
        };
        // YCSB splits the count evenly, the first threads taking one more of the remainder.
        let quota = operations.map(|o| {
            let (share, rest) = (o / clients as u64, o % clients as u64);
            share + u64::from((k as u64) < rest)
        });
        let mut weighed = (ops::KINDS.iter().zip(weights)).filter(|(_, w)| *w > 0.0);
        let only = match (weighed.next(), weighed.next()) {
            (Some((k, _)), None) => Some(*k),
            _ => None,
        };
        Plan {
            cumulative,
            only,
            chooser,
            scan_length,
            read_all_fields: ph.read_all_fields,
            write_all_fields: ph.write_all_fields,
            quota,
        }
    }
}

/// The phase's key chooser over `records` (and, for zipfian, the inserts it expects).
fn chooser(ph: &Phase, records: u64, expected_inserts: u64) -> Chooser {
    match ph.distribution {
        Distribution::Uniform => Chooser::Uniform {
            min: 0,
            span: records,
        },
        Distribution::Zipfian => Chooser::scrambled(0, records + expected_inserts + 1),
        Distribution::Latest => Chooser::latest(records),
        Distribution::Hotspot => Chooser::hotspot(
            0,
            records - 1,
            *ph.hotspot_data_fraction.get_ref(),
            *ph.hotspot_ops_fraction.get_ref(),
        ),
        Distribution::Exponential => Chooser::exponential(
            *ph.exponential_percentile.get_ref(),
            records as f64 * *ph.exponential_frac.get_ref(),
        ),
        Distribution::Sequential => Chooser::Sequential {
            min: 0,
            span: records,
            next: 0,
        },
        Distribution::SysbenchSpecial => Chooser::sysbench(sb::SPECIAL, records),
        Distribution::SysbenchGaussian => Chooser::sysbench(sb::GAUSSIAN, records),
        Distribution::SysbenchPareto => Chooser::sysbench(sb::PARETO, records),
    }
}
