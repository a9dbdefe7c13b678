//! The `ptx-litmus` command.

fn main() {
    std::process::exit(ptx_litmus::app::main());
}
