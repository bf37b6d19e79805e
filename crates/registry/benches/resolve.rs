//! Issue 4's efficiency: 500 workloads over 50 images against a real registry (CNCF
//! distribution on loopback). Prints registry requests per run (one per unique tag for
//! single-manifest images, HEAD then GET for an index) and wall time, bounded concurrency
//! against a sequential resolver.
//!
//! Run: `cargo bench -p liveproof-registry --bench resolve`.

use std::time::{Duration, Instant};

use liveproof_registry::{Client, ClientOptions, Credentials, Reference};
use liveproof_testkit::registry::{push_multiarch, push_single, RegistryServer};

#[expect(clippy::print_stdout, reason = "a benchmark prints its measurements")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let registry = RegistryServer::start();
        let pusher = registry.pusher();
        // 40 single-platform images and 10 multi-arch ones, as a fleet mixes them.
        for i in 0..50 {
            let repository = format!("fleet/app{i}");
            if i % 5 == 0 {
                push_multiarch(&pusher, &repository, "latest", "build-1").await;
            } else {
                push_single(&pusher, &repository, "latest", "build-1").await;
            }
        }
        let refs: Vec<(Reference, Option<Credentials>)> = (0..500)
            .map(|i| (registry.reference(&format!("fleet/app{}", i % 50), "latest"), None))
            .collect();
        for concurrency in [1, 8] {
            let mut times: Vec<Duration> = Vec::new();
            let mut requests = 0;
            for _ in 0..5 {
                let client = Client::new(ClientOptions {
                    insecure_registries: vec![registry.host.clone()],
                    concurrency,
                    ..ClientOptions::default()
                })?;
                let started = Instant::now();
                let results = client.resolve_all(refs.clone()).await;
                times.push(started.elapsed());
                assert!(results.values().all(Result::is_ok));
                requests = client.request_count();
            }
            times.sort();
            println!(
                "500 workloads over 50 tags (10 multi-arch), concurrency {concurrency}: median {:?} (min {:?}); {requests} registry requests (unique tags: 50)",
                times[times.len() / 2],
                times[0]
            );
        }
        Ok(())
    })
}
