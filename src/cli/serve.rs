//! `antiproof serve`: Serve proof trees over HTTP and as a web page.

use super::EXIT_OK;
use super::browse::SourceArgs;
use super::values;
use crate::web::App;
use crate::web::http::{ServeLimits, Server};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `antiproof serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Address to listen on (loopback unless told otherwise; port 0 picks a
    /// free port, printed on start).
    #[arg(long, default_value = "127.0.0.1:5004")]
    addr: SocketAddr,
    /// Threads that answer requests (proof lookups); connections are
    /// served by a few more, however many there are.
    #[arg(long, default_value_t = 8, value_parser = values::threads())]
    threads: usize,
    /// Open connections at most; one more is answered 503 at once.
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = values::connections())]
    max_connections: usize,
    /// Seconds a request may take from its first byte to its last (slow
    /// clients are cut off with 408).
    #[arg(long, default_value_t = 10, value_name = "SECS", value_parser = values::timeout_secs())]
    request_timeout: u64,
    /// Seconds a connection may stay idle (before or between requests).
    #[arg(long, default_value_t = 5, value_name = "SECS", value_parser = values::timeout_secs())]
    idle_timeout: u64,
}

/// Runs `antiproof serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let source = args.source.open()?;
    // The start-up line names the proofs, or counts them.
    let name = args.source.summary()?;
    let (app, warnings) = App::new(source, args.source.rules.stalemate()).with_files(
        &args.source.tree_files()?,
        &args.source.db,
        &args.source.rules.rule_set().describe(),
    );
    for w in warnings {
        errln!("antiproof serve: warning: {w}");
    }
    let app = Arc::new(app);
    let limits = ServeLimits {
        // The ranges above keep these small.
        threads: args.threads,
        max_connections: args.max_connections,
        request_timeout: Duration::from_secs(args.request_timeout),
        idle_timeout: Duration::from_secs(args.idle_timeout),
        ..ServeLimits::default()
    };
    let server = Server::bind(args.addr, limits, app.handler())
        .with_context(|| format!("binding {}", args.addr))?;
    let addr = server.local_addr()?;
    {
        let mut out = crate::cli::out::stdout();
        writeln!(
            out,
            "antiproof serve: {name} ({})",
            args.source.rules.rule_set().describe()
        )?;
        writeln!(
            out,
            "listening on http://{addr}/  (page: http://{addr}/browse)"
        )?;
        out.flush()?;
    }
    // Returns on Ctrl-C or SIGTERM.
    server.run().context("serving")?;
    Ok(EXIT_OK)
}
