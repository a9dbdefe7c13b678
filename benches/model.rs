//! `cargo bench`: the model checker's throughput on `litmus/` and `../shared/corpus`, the same
//! table as `ptx-litmus bench model`.

use clap::Parser;
use ptx_litmus::cli::Cli;

fn main() {
    // `cargo test --all-targets` runs benches once in test mode; the table is the same either way.
    let cli = Cli::parse_from(["ptx-litmus", "bench", "model"]);
    match ptx_litmus::app::run(cli) {
        Ok(_) => {}
        Err(e) => {
            eprintln!("bench model: {e}");
            std::process::exit(2);
        }
    }
}
