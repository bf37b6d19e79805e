//! `kubectl liveproof <TAB>`: kubectl (1.26+) runs `kubectl_complete-liveproof` from PATH with
//! the words typed after `kubectl liveproof` and shows the candidates it prints.

fn main() -> std::process::ExitCode {
    liveproof::kubectl_complete()
}
