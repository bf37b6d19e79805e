//! The resolver on real files, a real git repository and a stand-in kubectl: what a `verify`
//! command line names (`--commit`, `-f`, `-k`, `--record`, `--from`, the kubeconfig's contexts)
//! read, in order, with the words the CLI says on exit 2.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use liveproof_evidence::hint::Hinted as _;
use liveproof_gather::live::ClusterOptions;
use liveproof_gather::resolve::{
    resolve, ChangeRead, Checkpoint, ResolveError, ResolveInput, Resolved, Source, SourceRequest,
};
use liveproof_testkit::git::Repo;

/// When the commands below start: two hours after the test repositories' commits.
fn now() -> Timestamp {
    "2026-07-12T12:00:00Z".parse().expect("a time")
}

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: web\n        image: ghcr.io/acme/web:1.4.0\n";

/// `WEB` under another name and image, in no namespace.
fn workload(name: &str, image: &str) -> String {
    WEB.replace(
        "  name: web\n  namespace: apps\n",
        &format!("  name: {name}\n"),
    )
    .replace("ghcr.io/acme/web:1.4.0", image)
}

/// A command line naming `--from DUMP` (a file that exists) and nothing else to read.
fn input(dir: &Path) -> ResolveInput {
    let dump = dir.join("dump.yaml");
    std::fs::write(&dump, WEB).expect("write dump");
    ResolveInput {
        since: Some("2026-07-12T10:00:00Z".parse().expect("a time")),
        commit_given: None,
        commit: None,
        repo: PathBuf::from("."),
        snapshot: false,
        now: now(),
        manifests: Vec::new(),
        kustomize: Vec::new(),
        recursive: false,
        namespace: None,
        request_timeout: Duration::from_secs(30),
        record: None,
        source: SourceRequest::Offline {
            path: dump,
            kubeconfig: None,
            kubeconfig_namespace: false,
        },
        contexts: Vec::new(),
        all_contexts: false,
    }
}

/// `--commit` as given, as config hands it over (a SHA lowercased).
fn with_commit(mut input: ResolveInput, repo: &Path, commit: &str) -> ResolveInput {
    input.since = None;
    input.commit_given = Some(commit.to_string());
    input.commit = Some(if liveproof_evidence::is_commit_sha(commit) {
        commit.to_ascii_lowercase()
    } else {
        commit.to_string()
    });
    input.repo = repo.to_path_buf();
    input
}

/// Boxed, as a caller's own error holds it (it is large).
fn read(input: &ResolveInput) -> Result<Resolved, Box<ResolveError>> {
    resolve(input, |_, _| Ok::<(), Box<ResolveError>>(()))
}

fn refused(input: &ResolveInput) -> (ResolveError, String, String) {
    let error = *read(input).expect_err("refused");
    let text = error.to_string();
    let hint = error.hint().unwrap_or_default().into_owned();
    (error, text, hint)
}

fn names(change: &ChangeRead) -> Vec<String> {
    change
        .declared
        .iter()
        .map(|d| d.target.to_string())
        .collect()
}

/// Moved from config's unit tests: a command line that parsed without reading anything is
/// refused here, at the first read (git's, for a repository that is not there).
#[test]
fn a_commit_no_repository_holds_is_refused_at_the_first_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = with_commit(
        input(dir.path()),
        Path::new("/nonexistent/liveproof/repo"),
        "HEAD",
    );
    let (error, text, _) = refused(&input);
    assert!(
        matches!(error, ResolveError::CommitTime { .. }),
        "{error:?}"
    );
    assert!(text.starts_with("--commit HEAD: "), "{text}");
}

#[test]
fn a_ref_becomes_the_sha_it_names_and_its_time_the_change_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = Repo::new();
    let sha = repo.file("deploy.yaml", WEB).commit("web");
    let resolved = read(&with_commit(input(dir.path()), &repo.path(), "main")).expect("read");
    let change = &resolved.change;
    assert_eq!(change.commit.as_deref(), Some(sha.as_str()));
    let at: Timestamp = liveproof_testkit::git::DATE.parse().expect("a time");
    assert_eq!(change.since, Some(at));
    assert_eq!(change.commit_time, Some(at));
    assert_eq!(
        change.since_origin.as_deref(),
        Some(format!("committer time of {sha} in {}", repo.path().display()).as_str())
    );
    // Given in capitals, a SHA is asked as given, and named in lower case.
    let upper = sha[..12].to_ascii_uppercase();
    let resolved = read(&with_commit(input(dir.path()), &repo.path(), &upper)).expect("read");
    assert_eq!(resolved.change.commit, Some(sha[..12].to_string()));
    assert_eq!(resolved.change.since, Some(at));
}

#[test]
fn a_commit_after_now_is_refused_naming_the_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = Repo::new();
    repo.file("deploy.yaml", WEB).commit("web");
    let mut input = with_commit(input(dir.path()), &repo.path(), "HEAD");
    input.now = "2026-07-12T09:00:00.5Z".parse().expect("a time");
    let (error, text, hint) = refused(&input);
    assert!(
        matches!(error, ResolveError::CommitFuture { .. }),
        "{error:?}"
    );
    assert_eq!(
        text,
        "--commit HEAD: its committer time 2026-07-12T10:00:00Z is in the future (now 2026-07-12T09:00:00Z); the committer's clock was probably wrong"
    );
    assert!(hint.contains("--since"), "{hint}");
    // With a snapshot the time is the snapshot's: the commit's is only read.
    input.snapshot = true;
    let resolved = read(&input).expect("read");
    assert_eq!(resolved.change.since, None);
    assert!(resolved.change.commit_time.is_some());
}

#[test]
fn f_declares_the_workloads_of_a_file_and_of_a_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("web.yaml");
    std::fs::write(&file, WEB).expect("write");
    let mut input = input(dir.path());
    input.manifests = vec![file.clone()];
    let resolved = read(&input).expect("read");
    assert_eq!(names(&resolved.change), ["apps/deployment/web"]);
    let declared = &resolved.change.declared[0];
    assert_eq!(declared.source, file.display().to_string());
    assert_eq!(declared.given, file.display().to_string());
    assert!(declared.repo_path.is_none());

    // A directory: its top level, a workload that names no namespace in -n's; a manifest in
    // a directory under it is refused rather than left out, and read with -R.
    let manifests = dir.path().join("manifests");
    std::fs::create_dir_all(manifests.join("more")).expect("mkdir");
    std::fs::write(
        manifests.join("api.yaml"),
        workload("api", "ghcr.io/acme/api:2"),
    )
    .expect("write");
    std::fs::write(
        manifests.join("more/worker.yaml"),
        workload("worker", "ghcr.io/acme/worker:3"),
    )
    .expect("write");
    input.manifests = vec![manifests.clone()];
    input.namespace = Some("shop".into());
    let (_, text, hint) = refused(&input);
    assert_eq!(
        text,
        format!(
            "-f {}: 1 manifest file(s) in directories under it would not be read (kubectl reads them only with -R)",
            manifests.display()
        )
    );
    assert!(hint.starts_with("add -R"), "{hint}");
    input.recursive = true;
    let resolved = read(&input).expect("read");
    assert_eq!(
        names(&resolved.change),
        ["shop/deployment/api", "shop/deployment/worker"]
    );
}

#[test]
fn f_what_is_not_there_or_declares_nothing_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut input = input(dir.path());
    let missing = dir.path().join("missing.yaml");
    input.manifests = vec![missing.clone()];
    let (error, text, hint) = refused(&input);
    assert!(matches!(error, ResolveError::Manifests { .. }), "{error:?}");
    assert_eq!(
        text,
        format!("-f {0}: {0}: no such file or directory", missing.display())
    );
    assert!(!hint.is_empty());

    let service = dir.path().join("service.yaml");
    std::fs::write(
        &service,
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports: [{port: 80}]\n",
    )
    .expect("write");
    input.manifests = vec![service];
    let (_, text, hint) = refused(&input);
    assert!(text.contains(": declares no "), "{text}");
    assert!(hint.contains("not Helm templates"), "{hint}");

    // A URL is named without its credentials, and not fetched.
    input.manifests = vec![PathBuf::from("https://bob:s3cret@example.com/web.yaml")];
    let (_, text, hint) = refused(&input);
    assert!(text.contains("is a URL"), "{text}");
    assert!(
        !text.contains("s3cret") && !hint.contains("s3cret"),
        "{text}\n{hint}"
    );
}

/// With `--commit`, `-f` reads the manifests as committed in `--repo`: an edit not committed
/// does not count, and stdin (which is in no repository) is refused before it is read.
#[test]
fn f_with_a_commit_reads_the_manifests_as_committed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = Repo::new();
    let sha = repo.file("deploy/web.yaml", WEB).commit("web");
    repo.file(
        "deploy/web.yaml",
        &WEB.replace("ghcr.io/acme/web:1.4.0", "ghcr.io/acme/web:9.9.9"),
    );
    let mut input = with_commit(input(dir.path()), &repo.path(), "HEAD");
    // Relative, and not there from the working directory: read in --repo.
    input.manifests = vec![PathBuf::from("deploy/web.yaml")];
    let resolved = read(&input).expect("read");
    let declared = &resolved.change.declared;
    assert_eq!(names(&resolved.change), ["apps/deployment/web"]);
    assert!(
        declared[0].template.to_string().contains("web:1.4.0"),
        "{}",
        declared[0].template
    );
    assert_eq!(
        declared[0].source,
        format!("{}/deploy/web.yaml at {sha}", repo.path().display())
    );
    assert!(declared[0].repo_path.is_some());

    input.manifests = vec![PathBuf::from("-")];
    let (_, text, hint) = refused(&input);
    assert_eq!(
        text,
        format!("-f -: stdin is not in the repository, and with --commit {sha} -f reads the manifests as committed")
    );
    assert_eq!(
        hint,
        "name the file in --repo, or leave --commit out and give --since"
    );

    let outside = dir.path().join("web.yaml");
    std::fs::write(&outside, WEB).expect("write");
    input.manifests = vec![outside.clone()];
    let (_, text, _) = refused(&input);
    assert_eq!(
        text,
        format!(
            "-f {}: outside --repo {}",
            outside.display(),
            repo.path().display()
        )
    );
}

/// `-k DIR` is built by `LIVEPROOF_KUBECTL kustomize DIR` (a stand-in here, the real kubectl
/// in the CLI's tests); each way it can fail is said in our words.
#[test]
fn k_is_built_by_kubectl_kustomize() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubectl = dir.path().join("kubectl");
    std::fs::write(
        &kubectl,
        "#!/bin/sh\n[ \"$1\" = kustomize ] || exit 9\n\
         if [ -f \"$2/built.yaml\" ]; then cat \"$2/built.yaml\"; exit 0; fi\n\
         echo \"error: unable to find one of 'kustomization.yaml' in directory '$2'\" >&2\necho more >&2\nexit 1\n",
    )
    .expect("write");
    std::fs::set_permissions(
        &kubectl,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let base = dir.path().join("base");
    std::fs::create_dir_all(&base).expect("mkdir");
    std::fs::write(
        base.join("built.yaml"),
        workload("shop-web", "ghcr.io/acme/web:2"),
    )
    .expect("write");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    // Only this test reads LIVEPROOF_KUBECTL in this binary.
    std::env::set_var("LIVEPROOF_KUBECTL", &kubectl);

    let mut input = input(dir.path());
    input.kustomize = vec![base.clone()];
    input.namespace = Some("shop".into());
    let resolved = read(&input).expect("read");
    assert_eq!(names(&resolved.change), ["shop/deployment/shop-web"]);
    let declared = &resolved.change.declared[0];
    assert_eq!(
        declared.source,
        format!("kubectl kustomize {}", base.display())
    );
    assert_eq!(declared.given, format!("-k {}", base.display()));

    input.kustomize = vec![empty.clone()];
    let (error, text, hint) = refused(&input);
    assert!(matches!(error, ResolveError::Kustomize { .. }), "{error:?}");
    assert_eq!(
        text,
        format!(
            "-k {0}: `kubectl kustomize {0}` failed (exit status: 1): error: unable to find one of 'kustomization.yaml' in directory '{0}'",
            empty.display()
        )
    );
    assert_eq!(hint, "check that it builds: kubectl kustomize DIR");

    input.kustomize = vec![dir.path().join("dump.yaml")];
    let (_, text, hint) = refused(&input);
    assert!(text.ends_with(": not a directory"), "{text}");
    assert!(hint.starts_with("-k takes the directory"), "{hint}");

    std::env::set_var("LIVEPROOF_KUBECTL", dir.path().join("no-kubectl"));
    input.kustomize = vec![base];
    let (_, text, hint) = refused(&input);
    assert!(
        text.contains("-k builds the kustomization with kubectl, and there is none"),
        "{text}"
    );
    assert!(hint.contains("LIVEPROOF_KUBECTL"), "{hint}");
    std::env::remove_var("LIVEPROOF_KUBECTL");
}

#[test]
fn record_must_be_a_file_it_can_append_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut input = input(dir.path());
    input.record = Some(dir.path().to_path_buf());
    let (_, text, hint) = refused(&input);
    assert_eq!(
        text,
        format!("--record {}: is a directory", dir.path().display())
    );
    assert!(hint.starts_with("give --record a file"), "{hint}");

    input.record = Some(dir.path().join("no/such/dir/deployments.jsonl"));
    let (_, text, _) = refused(&input);
    assert!(text.contains(": cannot be appended to: "), "{text}");

    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).expect("symlink");
    input.record = Some(link);
    let (_, text, _) = refused(&input);
    assert!(text.contains("symbolic link"), "{text}");

    // A file that is not there yet is created, empty, when checked.
    let record = dir.path().join("deployments.jsonl");
    input.record = Some(record.clone());
    read(&input).expect("read");
    assert_eq!(std::fs::read(&record).expect("created"), b"");
}

#[test]
fn from_must_be_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut input = input(dir.path());
    let missing = dir.path().join("no-dump.yaml");
    input.source = SourceRequest::Offline {
        path: missing.clone(),
        kubeconfig: None,
        kubeconfig_namespace: true,
    };
    let (error, text, _) = refused(&input);
    assert!(
        matches!(error, ResolveError::FromMissing { .. }),
        "{error:?}"
    );
    assert_eq!(
        text,
        format!("--from {}: no such file or directory", missing.display())
    );
}

/// A kubeconfig whose current context `prod` names `apps`, and `staging` names `staging`.
fn kubeconfig(dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n\
         contexts:\n- name: prod\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: apps\n\
         - name: staging\n  context:\n    cluster: nowhere\n    user: nobody\n    namespace: staging\n\
         current-context: prod\nusers:\n- name: nobody\n  user: {}\n",
    )
    .expect("write kubeconfig");
    path
}

#[test]
fn a_context_the_kubeconfig_lacks_is_refused_naming_the_nearest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig(dir.path());
    let mut input = input(dir.path());
    let options = |context: Option<&str>| ClusterOptions {
        kubeconfig: Some(kc.clone()),
        context: context.map(str::to_string),
        ..ClusterOptions::default()
    };
    input.source = SourceRequest::Cluster(options(Some("prd")));
    let (error, text, hint) = refused(&input);
    assert!(
        matches!(error, ResolveError::UnknownContext { .. }),
        "{error:?}"
    );
    assert_eq!(
        text,
        "--context prd: the kubeconfig has no such context (it has: prod, staging)"
    );
    assert_eq!(
        hint,
        "did you mean `prod`? see `kubectl config get-contexts`"
    );

    input.source = SourceRequest::Cluster(options(Some("staging")));
    let resolved = read(&input).expect("read");
    assert!(matches!(resolved.source, Source::Live(_)));
    assert!(resolved.fleet.is_empty());

    // A fleet: every context with --all-contexts; those named, each checked, otherwise.
    input.source = SourceRequest::Fleet(options(None));
    input.all_contexts = true;
    assert_eq!(read(&input).expect("read").fleet, ["prod", "staging"]);
    input.all_contexts = false;
    input.contexts = vec!["prod".into(), "stagin".into()];
    let (_, text, hint) = refused(&input);
    assert!(text.starts_with("--context stagin: "), "{text}");
    assert!(hint.contains("`staging`"), "{hint}");
    input.contexts = vec!["prod".into(), "staging".into()];
    assert_eq!(read(&input).expect("read").fleet, ["prod", "staging"]);
}

#[test]
fn from_takes_the_namespace_of_the_kubeconfig_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig(dir.path());
    let mut input = input(dir.path());
    let SourceRequest::Offline { path, .. } = input.source.clone() else {
        panic!("offline")
    };
    input.source = SourceRequest::Offline {
        path,
        kubeconfig: Some(kc),
        kubeconfig_namespace: true,
    };
    let resolved = read(&input).expect("read");
    assert_eq!(resolved.namespace.as_deref(), Some("apps"));
    assert_eq!(
        resolved.namespace_origin.as_deref(),
        Some("the namespace of the kubeconfig context `prod`")
    );
    input.contexts = vec!["staging".into()];
    assert_eq!(
        read(&input).expect("read").namespace.as_deref(),
        Some("staging")
    );
    input.contexts = vec!["prod".into(), "staging".into()];
    let (error, text, _) = refused(&input);
    assert!(
        matches!(error, ResolveError::FromContexts { .. }),
        "{error:?}"
    );
    assert_eq!(
        text,
        "--from reads one dump, and --context is given 2 times"
    );
}

/// The caller's checks run where the reads put them: a check that refuses after the manifests
/// ends the resolve there, so nothing after it is read or made (`--record`'s file is not
/// created).
#[test]
fn a_check_that_refuses_ends_the_reads_where_it_stands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("web.yaml");
    std::fs::write(&file, WEB).expect("write");
    let record = dir.path().join("deployments.jsonl");
    let mut input = input(dir.path());
    input.manifests = vec![file];
    input.record = Some(record.clone());
    let mut seen = Vec::new();
    let error = resolve(&input, |at, read| {
        seen.push((at, read.declared.len()));
        match at {
            Checkpoint::Commit => Ok(()),
            Checkpoint::Declared => Err(Box::new(ResolveError::NoContexts)),
        }
    })
    .expect_err("refused at the check");
    assert!(matches!(*error, ResolveError::NoContexts), "{error:?}");
    assert_eq!(seen, [(Checkpoint::Commit, 0), (Checkpoint::Declared, 1)]);
    assert!(!record.exists(), "--record is checked after the manifests");
}
