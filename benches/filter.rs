//! Stored-position filter benchmark: the old in-memory map (Zobrist hash ->
//! proof size and verdict, a `FastMap<u64, u64>`, plus a `FastMap<u64, u8>`
//! of needs under the fifty-move rule) against the new [`StoredFilter`]
//! (hash fingerprints only, hits confirmed by the store), side by side in
//! one run over the same 10^7 random hashes: bytes a record, build time,
//! and lookup time for hits and misses (the old map reading the value, as
//! the search did), printed as ratios (new / old). Run
//! with `cargo bench --bench filter` (`-- N` for another record count).

use antiproof::fasthash::FastMap;
use antiproof::store::filter::StoredFilter;
use std::hint::black_box;
use std::time::Instant;

use antiproof::store::filter::sample_hashes as hashes;

/// Bytes of a hashbrown table of `capacity` entries of `entry` bytes: a
/// power of two of buckets (7/8 usable), an entry and a control byte each.
fn map_bytes(capacity: usize, entry: usize) -> f64 {
    if capacity == 0 {
        return 0.0;
    }
    let buckets = (capacity * 8).div_ceil(7).next_power_of_two();
    (buckets * (entry + 1)) as f64
}

/// Nanoseconds a lookup of `f` over `keys`, and how many were found.
fn time(keys: &[u64], f: impl Fn(u64) -> bool) -> (f64, usize) {
    let t = Instant::now();
    let mut found = 0usize;
    for &k in keys {
        found += black_box(f(black_box(k))) as usize;
    }
    (t.elapsed().as_nanos() as f64 / keys.len() as f64, found)
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let keys = hashes(1, n);
    let misses = hashes(2, n);
    println!("stored-position filter, {n} records, {n} hit and {n} miss lookups");

    let t = Instant::now();
    let mut old: FastMap<u64, u64> = FastMap::default();
    let mut needs: FastMap<u64, u8> = FastMap::default();
    for (i, &z) in keys.iter().enumerate() {
        old.insert(z, (i as u64) << 1 | 1);
        needs.insert(z, (i % 100) as u8);
    }
    let old_build = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut new = StoredFilter::with_expected(n as u64);
    for &z in &keys {
        new.insert(z);
    }
    new.fold();
    let new_build = t.elapsed().as_secs_f64();

    let old_bytes = map_bytes(old.capacity(), 16) / n as f64;
    let needs_bytes = map_bytes(needs.capacity(), 16) / n as f64;
    let new_bytes = new.bytes() as f64 / n as f64;

    let (old_hit, h1) = time(&keys, |z| old.get(&z).is_some_and(|&v| v != 0));
    let (new_hit, h2) = time(&keys, |z| new.contains(z));
    let (old_miss, m1) = time(&misses, |z| old.get(&z).is_some_and(|&v| v != 0));
    let (new_miss, m2) = time(&misses, |z| new.contains(z));
    // As the search looks them up: a node's children (about 25) at once,
    // offsets and remainders prefetched for the batch first.
    let batched = |keys: &[u64]| {
        let t = Instant::now();
        let mut found = 0usize;
        for c in keys.chunks(25) {
            for &z in c {
                new.prefetch_offsets(z);
            }
            for &z in c {
                new.prefetch_remainders(z);
            }
            for &z in c {
                found += black_box(new.contains(black_box(z))) as usize;
            }
        }
        (t.elapsed().as_nanos() as f64 / keys.len() as f64, found)
    };
    let (new_hit_b, h3) = batched(&keys);
    let (new_miss_b, m3) = batched(&misses);
    assert_eq!((h3, m3), (n, m2));
    assert_eq!(h1, n, "the old map lost a key");
    assert_eq!(h2, n, "the filter lost a key (a false negative)");

    println!(
        "{:<34} {:>12} {:>12} {:>10}",
        "", "old map", "new filter", "new/old"
    );
    println!(
        "{:<34} {:>12.2} {:>12.2} {:>10.3}",
        "bytes a record",
        old_bytes,
        new_bytes,
        new_bytes / old_bytes
    );
    println!(
        "{:<34} {:>12.2} {:>12.2} {:>10.3}",
        "bytes a record, fifty-move rule",
        old_bytes + needs_bytes,
        new_bytes,
        new_bytes / (old_bytes + needs_bytes)
    );
    println!(
        "{:<34} {:>12.2} {:>12.2} {:>10.3}",
        "build s",
        old_build,
        new_build,
        new_build / old_build
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>10.3}",
        "lookup ns, hit",
        old_hit,
        new_hit,
        new_hit / old_hit
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>10.3}",
        "lookup ns, miss",
        old_miss,
        new_miss,
        new_miss / old_miss
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>10.3}",
        "lookup ns, hit, prefetched x25",
        old_hit,
        new_hit_b,
        new_hit_b / old_hit
    );
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>10.3}",
        "lookup ns, miss, prefetched x25",
        old_miss,
        new_miss_b,
        new_miss_b / old_miss
    );
    println!(
        "false positives of the filter: {m2} of {n} misses ({:.2e}; the old map: {m1}), each confirmed by one store read",
        m2 as f64 / n as f64
    );
    println!(
        "at 10^9 records: old map {:.1} GB ({:.1} GB with needs), filter {:.1} GB",
        old_bytes,
        old_bytes + needs_bytes,
        new_bytes
    );
}
