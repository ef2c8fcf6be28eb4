//! The integration tests, one binary (`cargo test --test tests`): a module
//! per area, each the file of the same name beside this one (one binary
//! each before: compiling and linking 37 of them was most of `cargo
//! test`'s time).
//! Run one area or one test by its path: `cargo test --test tests
//! web_serve::` or `cargo test --test tests web_serve::load_test`.
//!
//! Shared helpers are in `util` (the binary, temporary and state
//! directories per module, a small prover, a walker of stored proofs), the
//! cross-checked test data in `data` (tests/data/, origins in its
//! README.md).

mod data;
mod util;

mod check_bench;
mod check_faults;
mod check_independence;
mod check_proofs_dir;
mod check_store;
mod check_tree;
mod cli_files;
mod cli_lines;
mod cli_perft;
mod cli_values;
mod cli_width;
mod compressed;
mod corruption;
mod export_split;
mod jobs;
mod obligations;
mod prove_cli;
mod prove_fifty;
mod prove_ladder;
mod rules_fuzz;
mod rules_perft;
mod rules_vs_shakmaty;
mod scripts;
mod sim;
mod slurm_fake;
mod store_faults;
mod tables_build;
mod tables_cli;
mod tables_fifty;
mod tables_known_faults;
mod tables_leaves;
mod uci;
mod verify_fifty;
mod verify_replies;
mod web_browse;
mod web_browser;
mod web_serve;
