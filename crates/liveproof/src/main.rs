//! The `liveproof` binary: everything is in the library, so the kubectl plugin name shares it.

fn main() -> std::process::ExitCode {
    liveproof::main()
}
