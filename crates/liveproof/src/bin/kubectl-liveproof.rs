//! `kubectl liveproof …`: kubectl runs any `kubectl-NAME` on PATH as `kubectl NAME`.

fn main() -> std::process::ExitCode {
    liveproof::main()
}
