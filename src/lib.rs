//! antiproof: proves and certifies forced wins in antichess openings.
//!
//! Modules, one-way doors (see README.md):
//! - [`rules`]: the project's own fast antichess rules (prover, tables).
//! - [`cli`]: the command line, a thin layer over the rest.
pub mod check;
pub mod cli;
pub mod openings;
pub mod rules;
pub mod search;
pub mod store;
pub mod web;
pub mod wintree;
