//! A table of many counters, as real tables are (downloads per repository,
//! views per page): how many counters a benchmark's tables hold, how its
//! increments spread over them, and the rows that make them.

use std::fmt::Write;

use rand::distr::{Distribution, Uniform};
use rand::rngs::SmallRng;
use rand_distr::Zipf;
use serde::Serialize;

/// How a population's increments spread over its counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Spread {
    /// Every counter as likely as any other: most increments hit a counter
    /// no other client is near.
    Uniform,
    /// Zipf's law with exponent 1: the counter of rank k gets 1/k of the
    /// first's increments, so a few counters at the head take most of
    /// them, as downloads and page views do.
    Zipf,
}

impl Spread {
    /// The name `--spread` takes.
    pub fn name(self) -> &'static str {
        match self {
            Spread::Uniform => "uniform",
            Spread::Zipf => "zipf",
        }
    }
}

/// The counters a benchmark's tables hold, instead of its hot counters,
/// and how increments spread over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Population {
    pub counters: u32,
    pub spread: Spread,
    /// With a number, only the counters of ids 1 to it (the spread's
    /// hottest: Zipf's rank k is id k) get the rounds' slots in a table of
    /// dynamic slot counts, and the others one slot each, as the docs
    /// advise for a large table; a fixed package's counters all get its slots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slotted_head: Option<u32>,
}

/// Counters a population may have.
pub(super) const COUNTERS_LIMIT: u32 = 10_000_000;

/// Rows each bulk INSERT of a population's counters carries: a few hundred
/// kilobytes of SQL, far below any server's `max_allowed_packet`.
const ROWS_PER_INSERT: u32 = 5_000;

/// The description of every benchmark counter, as `counter_setup` is given it.
pub(super) const DESCRIPTION: &str = "benchmark counter";

impl Population {
    /// A source of counter ids, 1 to `counters`, spread as the population
    /// says: one per client, each seeded apart.
    pub(super) fn draw(self) -> Draw {
        let sampler = match self.spread {
            Spread::Uniform => {
                Sampler::Uniform(Uniform::new_inclusive(1, self.counters).expect("a population has counters"))
            }
            Spread::Zipf => {
                Sampler::Zipf(Zipf::new(f64::from(self.counters), 1.0).expect("a population has counters"))
            }
        };
        Draw { sampler, rng: rand::make_rng() }
    }

    /// The slots counter `id` gets in a table of dynamic slot counts whose
    /// rounds run on `slots`.
    fn slots_of(self, id: u32, slots: u32) -> u32 {
        match self.slotted_head {
            Some(head) if id > head => 1,
            _ => slots,
        }
    }

    /// The population with every counter slotted: a fixed package's.
    pub(super) fn all_slotted(self) -> Self {
        Population { slotted_head: None, ..self }
    }

    /// The statements that make every counter of the population with
    /// `slots` slots each ([`Population::slots_of`]), named by `name`, in
    /// `table`: the rows
    /// `counter_setup` makes, in batches, in the order of the ids (which
    /// is not the order of the names, so the table grows as one that
    /// gained its counters over time does). `slots` of `None` makes the
    /// single-row counters' rows. Each statement is written when it is
    /// taken: a million counters of 8 slots are hundreds of megabytes of SQL.
    pub fn inserts<'a>(
        self,
        table: &'a str,
        slots: Option<u32>,
        name: impl Fn(u32) -> String + 'a,
    ) -> impl Iterator<Item = String> + 'a {
        let rows_per_counter = slots.unwrap_or(1);
        let counters_per_insert = (ROWS_PER_INSERT / rows_per_counter).max(1);
        let columns = if slots.is_some() { "(counter_name, counter_id, description)" } else { "(id, n)" };
        (0..self.counters.div_ceil(counters_per_insert)).map(move |batch| {
            let first = batch * counters_per_insert + 1;
            let last = self.counters.min(first + counters_per_insert - 1);
            let rows: Vec<String> = (first..=last)
                .flat_map(|id| {
                    let name = name(id);
                    let rows = slots.map_or(1, |slots| self.slots_of(id, slots));
                    (1..=rows).map(move |slot| match slots {
                        Some(_) => format!("('{name}', {slot}, '{DESCRIPTION}')"),
                        None => format!("({name}, 0)"),
                    })
                })
                .collect();
            format!("INSERT INTO `{table}` {columns} VALUES {}", rows.join(", "))
        })
    }
}

/// The name of a benchmark counter of `slots` slots: a hot one, or one
/// of a population.
pub(super) fn slotted_name(id: u32, slots: u32) -> String {
    let mut name = String::new();
    write_slotted_name(&mut name, id, slots);
    name
}

fn write_slotted_name(name: &mut String, id: u32, slots: u32) {
    write!(name, "countername{id}_{slots}slots").expect("a String takes any write");
}

/// The counters one client increments each iteration.
pub(super) enum Targets {
    /// The hot counters, every one every iteration.
    Hot(Vec<String>),
    /// One counter of a population, drawn anew each iteration: a
    /// single-row id, or with `slots`, a package counter's name, written
    /// over the last one's (no allocation per increment).
    Drawn { draw: Draw, slots: Option<u32>, drawn: [String; 1] },
}

impl Targets {
    /// A population's counters, drawn from `draw`.
    pub(super) fn drawn(draw: Draw, slots: Option<u32>) -> Self {
        Targets::Drawn { draw, slots, drawn: [String::new()] }
    }

    /// The names (or ids) of the next iteration's counters.
    pub(super) fn next(&mut self) -> &[String] {
        match self {
            Targets::Hot(names) => names,
            Targets::Drawn { draw, slots, drawn } => {
                let id = draw.next_id();
                let name = &mut drawn[0];
                name.clear();
                match slots {
                    Some(slots) => write_slotted_name(name, id, *slots),
                    None => write!(name, "{id}").expect("a String takes any write"),
                }
                drawn
            }
        }
    }
}

/// Counter ids drawn from a population.
pub(super) struct Draw {
    sampler: Sampler,
    rng: SmallRng,
}

enum Sampler {
    Uniform(Uniform<u32>),
    Zipf(Zipf<f64>),
}

impl Draw {
    /// The next counter's id, from 1 to the population's counters.
    pub(super) fn next_id(&mut self) -> u32 {
        match &self.sampler {
            Sampler::Uniform(uniform) => uniform.sample(&mut self.rng),
            // Zipf samples are whole numbers from 1 to n, as floats.
            Sampler::Zipf(zipf) => zipf.sample(&mut self.rng) as u32,
        }
    }

    /// The same draws every time, for tests.
    #[cfg(test)]
    fn seeded(population: Population, seed: u64) -> Self {
        use rand::SeedableRng;
        Draw { rng: SmallRng::seed_from_u64(seed), ..population.draw() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(spread: Spread, counters: u32, draws: u32) -> Vec<u32> {
        let mut draw = Draw::seeded(Population { counters, spread, slotted_head: None }, 7);
        let mut counts = vec![0; counters as usize + 1];
        for _ in 0..draws {
            counts[draw.next_id() as usize] += 1;
        }
        counts
    }

    #[test]
    fn draws_stay_within_the_population() {
        for spread in [Spread::Uniform, Spread::Zipf] {
            let counts = counts(spread, 10, 10_000);
            assert_eq!(counts[0], 0, "{spread:?} drew id 0");
            assert_eq!(counts.iter().sum::<u32>(), 10_000, "{spread:?} drew past 10");
        }
    }

    #[test]
    fn a_uniform_spread_hits_every_counter_alike() {
        let counts = counts(Spread::Uniform, 10, 100_000);
        assert!(counts[1..].iter().all(|&count| (9_000..11_000).contains(&count)), "{counts:?}");
    }

    #[test]
    fn a_zipf_spread_gives_the_counter_of_rank_k_a_kth_of_the_first() {
        // With s = 1 over 1,000 counters the first takes 1/H(1000) = 13.4%.
        let counts = counts(Spread::Zipf, 1_000, 200_000);
        let first = f64::from(counts[1]);
        assert!((0.12..0.15).contains(&(first / 200_000.0)), "first took {first}");
        for rank in [2, 4, 10] {
            let ratio = first / f64::from(counts[rank]);
            assert!((0.85 * rank as f64..1.15 * rank as f64).contains(&ratio), "rank {rank}: {ratio}");
        }
    }

    #[test]
    fn each_iteration_targets_the_next_drawn_counter_by_its_name() {
        let population = Population { counters: 50, spread: Spread::Uniform, slotted_head: None };
        let (mut ids, mut names) = (Draw::seeded(population, 3), Draw::seeded(population, 3));
        let mut slotted = Targets::drawn(Draw::seeded(population, 3), Some(4));
        let mut single = Targets::drawn(Draw::seeded(population, 3), None);
        for _ in 0..20 {
            assert_eq!(slotted.next(), [slotted_name(ids.next_id(), 4)]);
            assert_eq!(single.next(), [names.next_id().to_string()]);
        }
    }

    #[test]
    fn inserts_make_every_slot_of_every_counter_once() {
        let population = Population { counters: 3_001, spread: Spread::Uniform, slotted_head: None };
        let inserts: Vec<String> = population.inserts("t", Some(4), |id| format!("c{id}")).collect();
        assert_eq!(inserts.len(), 3, "1,250 counters of 4 slots per insert");
        let all = inserts.join(" ");
        assert_eq!(all.matches("('c").count(), 3_001 * 4);
        assert!(inserts[0].starts_with(
            "INSERT INTO `t` (counter_name, counter_id, description) VALUES \
             ('c1', 1, 'benchmark counter'), ('c1', 2, 'benchmark counter'), ('c1', 3, 'benchmark counter'), ('c1', 4, "
        ));
        assert!(all.contains("('c3001', 4, ") && !all.contains("('c3001', 5, ") && !all.contains(", 0, "));
        let single: Vec<String> = population.inserts("s", None, |id| id.to_string()).collect();
        assert_eq!(single.len(), 1);
        assert!(single[0].starts_with("INSERT INTO `s` (id, n) VALUES (1, 0), (2, 0)"));
        assert!(single[0].ends_with("(3001, 0)"));
    }

    #[test]
    fn only_a_slotted_head_gets_the_slots() {
        let population = Population { counters: 5, spread: Spread::Zipf, slotted_head: Some(2) };
        let inserts: Vec<String> = population.inserts("t", Some(3), |id| format!("c{id}")).collect();
        let all = inserts.join(" ");
        assert_eq!(all.matches("('c1', ").count(), 3);
        assert_eq!(all.matches("('c2', ").count(), 3);
        for tail in ["c3", "c4", "c5"] {
            assert_eq!(all.matches(&format!("('{tail}', ")).count(), 1, "{tail} has slot 1 only: {all}");
            assert!(all.contains(&format!("('{tail}', 1, ")), "{all}");
        }
        let fixed: String = population.all_slotted().inserts("t", Some(3), |id| format!("c{id}")).collect();
        assert_eq!(fixed.matches("('c5', ").count(), 3, "a fixed package's counters have all its slots");
    }
}
