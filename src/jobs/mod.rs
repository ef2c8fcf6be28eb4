//! Job-level proof-number search: `prove --jobs N` and `job run`.
//!
//! The master keeps the upper proof tree in the store ([`top`]) and hands
//! its most-proving frontier leaves out as jobs ([`job`]: a small file
//! any engine can run; [`run`] is ours) on an [`executor`] (worker
//! processes here, threads of this process, or Slurm; or [`sim`], a
//! simulated cluster). Nothing a worker returns is trusted: every
//! certificate is certified by the independent checker before its
//! positions enter the store ([`merge`]). [`master`] is the loop.
//!
//! One module a part:
//!
//! * [`job`]: the job and result files (JSON, versioned);
//! * [`run`]: running one job through the prover;
//! * [`top`]: the top tree in the store (its node layout, resumption and
//!   selection in submodules);
//! * [`merge`]: checking a result and turning its certificate into
//!   records;
//! * [`executor`]: local worker processes, threads in this process, and
//!   Slurm;
//! * [`sim`]: a simulated cluster of P workers in virtual time;
//! * [`excerpt`]: a job's table excerpt, for the jobs below it (jobs
//!   with tables of their own);
//! * [`shared_table`]: the jobs' shared table, grown as they fill it;
//! * [`state`]: the run-state file (`prove --state`), for a run to go on
//!   on another machine;
//! * [`master`]: the master loop (its report, status file and work
//!   directory in submodules).

pub mod excerpt;
pub mod executor;
pub mod job;
pub mod master;
pub mod merge;
pub mod run;
pub mod shared_table;
pub mod sim;
pub mod state;
pub mod top;
