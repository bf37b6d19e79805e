//! The command line as clap sees it. Nothing here is validated beyond its shape: that is
//! [`crate::config`]'s job (ripgrep's lowargs → hiargs).

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::engine::ArgValueCompleter;
use liveproof_evidence::kind;
use liveproof_evidence::Report;
use liveproof_report::{DemoOutcome, ErrorReport, Format, Output, Render, StaleOutcome};

const ABOUT: &str = "Prove a change is live in a Kubernetes cluster, from the artifacts it left.";

/// `--timeout`'s default (verify, stale, rollback): what clap fills in and what a request
/// built without clap (an MCP tool call) starts from.
pub const DEFAULT_TIMEOUT: &str = "5m";

/// `--request-timeout`'s default, as [`DEFAULT_TIMEOUT`].
pub const DEFAULT_REQUEST_TIMEOUT: &str = "30s";

/// `--repo`'s default: the working directory, as [`DEFAULT_TIMEOUT`].
pub const DEFAULT_REPO: &str = ".";

const LONG_ABOUT: &str = "\
Prove a change is live in a Kubernetes cluster, from the artifacts it left.

A green PR, `UpgradeSucceeded` and `kubectl rollout status` report on themselves; the old build
can still be serving. liveproof reads the artifacts instead and answers live, not_live, unproven
or superseded (a later change replaced it), with every piece of evidence and where it was read.

Evidence comes in three tiers, cheap to conclusive:
  spec      the workload's pod template carries the change, read back from the API
  status    what controllers say (observedGeneration, rollout counts) - never proof alone
  artifact  the running pods: on the current revision, started after the change, showing it

A target is live only when artifact evidence proves it: every serving pod is on the current
revision and started after the change, and every expectation you gave passed.

Exit codes: 0 live, 1 not live, 2 usage or operational error, 3 unproven, 4 superseded.";

#[derive(Debug, Parser)]
#[command(name = "liveproof", version, about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cli {
    /// More output on stderr: -v logs each API request (its status and time) and the request
    /// count, -vv more; kubectl's -v=N too (1-6: -v, 7 and up: -vv). Also taken after the
    /// subcommands that log (`verify -v`).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Command,
}

/// `-v`, on the subcommands that log something (not `skill`, `schema`, `completion`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
pub struct Verbosity {
    /// More output on stderr: -v each API request, -vv more (kubectl's -v=6 as -v).
    #[arg(short, long, action = clap::ArgAction::Count, help_heading = "Output")]
    pub verbose: u8,
}

/// `--color`, on the subcommands whose text report has colour (verify, demo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Args)]
pub struct Colour {
    /// When to colour the text report: auto (a terminal, NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, hide_possible_values = true, hide_default_value = true, hide_short_help = true, help_heading = "Output")]
    pub color: ColorChoice,
}

impl Default for Colour {
    fn default() -> Self {
        Colour {
            color: ColorChoice::Auto,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and NO_COLOR is unset.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Collect the evidence for each target, print it, exit with the verdict.
    #[command(long_about = VERIFY_LONG_ABOUT, after_long_help = VERIFY_EXAMPLES)]
    Verify(Box<VerifyArgs>),
    /// Run the "merged but never deployed" story on a built-in simulated cluster.
    #[command(
        long_about = "Start the built-in simulated cluster with the \"merged but never deployed\" \
        story, verify it (not live: the template still runs the old image and the pods started \
        before the merge), play the controller reconciling, and verify again (live).\n\n\
        No cluster and no network needed. Exits 0 when both verdicts come out as they should."
    )]
    Demo(DemoArgs),
    /// Record the pre-apply state (workloads, Helm releases) and publish it atomically as DIR/current.
    #[command(long_about = SNAPSHOT_LONG_ABOUT)]
    Snapshot(SnapshotArgs),
    /// Put the workloads that failed since the snapshot back to their snapshot template.
    #[command(long_about = ROLLBACK_LONG_ABOUT)]
    Rollback(RollbackArgs),
    /// Find workloads running an old build behind a mutable tag; with --restart, restart only those.
    #[command(long_about = STALE_LONG_ABOUT, after_long_help = STALE_EXAMPLES)]
    Stale(StaleArgs),
    /// Read an installed Helm release from its storage, without helm.
    #[command(subcommand)]
    Release(ReleaseCommand),
    /// Serve a simulated Kubernetes API from fixture files or the demo story, until Ctrl-C (for tests and trying liveproof out).
    #[command(
        long_about = "Serve a simulated Kubernetes API on 127.0.0.1 from fixture files (--fixtures) \
        or the demo story (--demo) until Ctrl-C, and write a kubeconfig for it (the path is \
        printed). The real kubectl works against it: get, apply, create -f, scale, set image, \
        rollout status/restart/undo/pause/resume. Built-in controllers roll out every Deployment, \
        StatefulSet and DaemonSet changed through the API (new ReplicaSet or ControllerRevision, \
        pods started now, old pods terminated); loaded objects stay as loaded until then. `kubectl create deployment …` (a protobuf body) is refused: use \
        `--dry-run=client -o yaml | kubectl apply -f -`.\n\n\
        Fault injection makes it a misbehaving cluster to try clients against: --latency, \
        --fail-requests, --close-watches-after, --expire-watches. With -vv every request it \
        serves is logged on stderr (method, path and query, status).\n\n\
        Example: liveproof sim --demo --kubeconfig-out ./sim.kubeconfig\n\
        Example: liveproof sim --demo --fail-requests 3:503 --expire-watches -vv"
    )]
    Sim(SimArgs),
    /// Before the merge: find changes that will not deploy (a chart version not bumped, a mutable tag nothing restarts, config read at start, a suspended GitOps object).
    #[command(long_about = LINT_LONG_ABOUT)]
    Lint(LintArgs),
    /// Serve verify, release show and stale to agents over MCP (JSON-RPC on stdin/stdout).
    #[command(
        long_about = "Serve verify, release show and stale to agents as Model Context Protocol \
        tools over stdio (JSON-RPC 2.0, one message per line; logs on stderr). Each tool returns \
        the same JSON as the command's `-o json` and fails with the command's message.\n\n\
        Read-only unless --allow-writes, which also offers restart_stale (`stale --restart`). \
        A tool may name only the kubeconfigs (--kubeconfig, $KUBECONFIG, ~/.kube/config), the \
        files under the directories (--allow-from) and the version URLs (--allow-version-url) \
        the operator allows, and the verify tool shows container logs only with \
        --allow-logs.\n\n\
        Example client configuration: {\"command\": \"liveproof\", \"args\": [\"mcp\"]}"
    )]
    Mcp(McpArgs),
    /// List which reads liveproof needs the current identity may and may not make (kubectl auth can-i's habit).
    #[command(long_about = AUTH_LONG_ABOUT)]
    Auth(AuthArgs),
    /// Keep every Verification's status true, from watches shared by all of them (in the cluster or from a kubeconfig).
    #[command(long_about = crate::controller::command::CONTROLLER_LONG_ABOUT)]
    Controller(crate::controller::ControllerArgs),
    /// Print the bundled agent procedure (SKILL.md): how to prove a change live before calling it deployed.
    #[command(
        long_about = "Print the bundled agent procedure, a SKILL.md document to give an AI agent \
        that deploys or checks deploys: establish the change, verify it with `liveproof verify \
        -o json`, report \"deployed\" only on the verdict `live` with the evidence quoted, act on \
        `not_live` and `unproven`, never print a secret value. It is compiled into the binary, so \
        every command it names is one this binary takes."
    )]
    Skill,
    /// Print the JSON Schema of the `-o json` report (liveproof/v1), fleet reports and the exit-2 error document included.
    #[command(
        long_about = "Print the JSON Schema (draft 2020-12) of the report `liveproof verify -o \
        json` prints, derived from the report's own types so the two cannot drift apart. A report over \
        several clusters (`--context` repeated, `--all-contexts`) is the same report with \
        `clusters` added, which the schema describes. On exit 2 `-o json` prints the error \
        document instead ({\"schema\": \"liveproof/v1\", \"error\": {\"message\", \"hint\"}}): \
        the schema is one of the two."
    )]
    Schema(SchemaArgs),
    /// Print a shell completion script: bash, zsh, fish or powershell.
    #[command(long_about = COMPLETION_LONG_ABOUT)]
    Completion(CompletionArgs),
    /// Write the man pages (liveproof.1 and one per subcommand) to DIR, or liveproof.1 to stdout.
    #[command(
        long_about = "Write the man pages, generated from this binary's own command line, so \
        they cannot drift from it: liveproof.1 and one page per subcommand (liveproof-verify.1, \
        …) into DIR, or, without DIR, liveproof.1 to stdout.\n\n\
        Example: liveproof man /usr/local/share/man/man1 && man liveproof-verify"
    )]
    Man(ManArgs),
    /// Print liveproof's version (as --version).
    Version,
}

const COMPLETION_LONG_ABOUT: &str = "\
Print a completion script for SHELL to stdout, generated from this binary's command line.

  bash        source <(liveproof completion bash)    (or save it in /etc/bash_completion.d/)
  zsh         liveproof completion zsh > \"${fpath[1]}/_liveproof\"
  fish        liveproof completion fish > ~/.config/fish/completions/liveproof.fish
  powershell  liveproof completion powershell | Out-String | Invoke-Expression

The script asks this binary at each <TAB>: subcommands, flags and kinds, and from the cluster
the names after `deploy/`, the namespaces after -n and the contexts after --context (each read
bounded by 2 s; nothing is written, and nothing is said when the cluster cannot be read).

As a kubectl plugin (kubectl 1.26+): put `kubectl_complete-liveproof` (in the release archive
beside `kubectl-liveproof`) on PATH, and `kubectl liveproof <TAB>` completes the same.";

/// `liveproof completion SHELL`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `liveproof man [DIR]`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Where to write liveproof.1 and the subcommands' pages (created if missing); without
    /// it, liveproof.1 goes to stdout.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

const SNAPSHOT_LONG_ABOUT: &str = "\
Record, before an apply, every workload's generation, pod template (in full), images and
revision, and every Helm release's newest revision, with the commit and the time taken.

It is written atomically under DIR/<commit>/snapshot.json (temp file, fsync, rename; mode 0600)
and then published as DIR/current (an atomic rename again), so a verify or rollback job never
reads a half-written snapshot. A snapshot of the same commit already there is kept, not
overwritten (--overwrite replaces it); temp files a killed run left are removed.

What the file holds: per workload its generation, revision, images and pod template as the API
returns it (rollback restores it whole, so env values written literally in the template — config
— are in it; Secrets are only referenced there, never read); per Helm release its newest
revision and status. No Secret data, no Helm values. DIR is checked first: an unwritable or full DIR fails before any request
to the cluster (exit 2) — a pipeline must not go on without a way back.

Then, in a job of its own that runs whatever happened to the apply:
  liveproof verify --snapshot DIR --commit SHA     (what changed, and is it live?)
  liveproof rollback --snapshot DIR --commit SHA   (put back what failed)";

const ROLLBACK_LONG_ABOUT: &str = "\
For each workload that changed since the snapshot and is not live now (re-evaluated here, never
trusted from a file), restore the snapshot's pod template — one JSON patch of /spec/template, as
`kubectl rollout undo` restores a revision — then verify the rollback itself is live. A workload
that did not fail is never touched, nor one a later change superseded (it says so: nothing to roll
back). Helm releases are not re-implemented: the exact `helm rollback NAME REVISION` to run is
printed.

Exit codes: 0 nothing to roll back, or everything rolled back is live; 1 a rollback failed or
is not live (or a Helm release still needs its printed command); 2 error (a snapshot of another
commit, a missing snapshot); 3 nothing failed but something could not be proven.";

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// Where snapshots live (e.g. a path shared by the apply and verify jobs).
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// The commit being deployed.
    #[arg(long, value_name = "SHA")]
    pub commit: String,

    /// Limit the snapshot to these workloads (KIND/NAME or NAMESPACE/KIND/NAME).
    #[arg(value_name = "TARGET", conflicts_with = "manifests")]
    pub targets: Vec<String>,

    /// Limit it to the workloads these manifests declare.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub manifests: Option<PathBuf>,

    /// Replace a snapshot of this commit that DIR already holds. Without it the existing one is
    /// kept (and published as DIR/current): a retried job runs after the apply, and its
    /// snapshot would record the new state instead of the way back.
    #[arg(long)]
    pub overwrite: bool,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// The snapshot directory (`liveproof snapshot --dir`).
    #[arg(long, value_name = "DIR")]
    pub snapshot: PathBuf,

    /// The commit that was deployed; a snapshot of another commit is refused.
    #[arg(long, value_name = "SHA")]
    pub commit: String,

    /// Print the patches instead of sending them.
    #[arg(long)]
    pub dry_run: bool,

    /// How long to wait for the rolled-back workloads to be live, e.g. 90s, 5m; 0 = 24h.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_TIMEOUT)]
    pub timeout: String,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

const STALE_LONG_ABOUT: &str = "\
Compare the digest each pod runs with what its tag resolves to now, for the pod's node platform.

A rebuild pushed to the same tag (`:latest`) leaves the pod template byte-identical: apply
changes nothing and no pod restarts, so the old build keeps serving. This finds exactly the
workloads whose pods run an older digest than the tag now names (an index's per-platform entry,
attestation entries skipped), and with --restart restarts only those — as `kubectl rollout
restart` does — so healthy services are not bounced and a redeploy that changed no image does
nothing at all.

Scope: the targets given; or the workloads a folder of manifests declares (-f DIR: only what
the repository manages); or every workload in the namespace (-n) or cluster (-A).

Exit codes: 0 nothing stale (or every stale workload restarted, and live with --wait),
1 stale workloads left, 2 error, 3 some digests could not be compared.";

const STALE_EXAMPLES: &str = "\
Examples:
  # what in this namespace runs an old build of a mutable tag?
  liveproof stale -n bots

  # only what the repository declares; restart what is stale and wait for it to be live
  liveproof stale -f k8s/ --restart --wait --timeout 5m

  # show the patches without sending them
  liveproof stale -f k8s/ --restart --dry-run";

#[derive(Debug, Clone, PartialEq, Args)]
pub struct StaleArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// Workloads to check: KIND/NAME or NAMESPACE/KIND/NAME (deployment, statefulset, daemonset).
    /// Without targets, -f or -l: every workload in -n (or every namespace with -A).
    #[arg(value_name = "TARGET", conflicts_with_all = ["manifests", "selector"])]
    pub targets: Vec<String>,

    /// Check the workloads whose labels match, in -n (or every namespace with -A), as
    /// `kubectl get -l` selects: app=web, tier!=cache, env in (prod,staging). A selector that
    /// matches nothing is an error. Example: -l app.kubernetes.io/part-of=shop
    #[arg(
        short = 'l',
        long,
        value_name = "SELECTOR",
        conflicts_with = "manifests"
    )]
    pub selector: Option<String>,

    /// Check only the workloads these manifests declare (a file or a directory of YAML/JSON).
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub manifests: Option<PathBuf>,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// Check every tagged image, not only mutable ones (no tag, `:latest`).
    #[arg(long, help_heading = "Registry")]
    pub check_digests: bool,

    /// A registry (HOST[:PORT]) spoken to over plain HTTP. Repeatable.
    #[arg(long, value_name = "HOST", help_heading = "Registry")]
    pub insecure_registry: Vec<String>,

    /// Restart the stale workloads (and only them): one PATCH of the pod template's
    /// kubectl.kubernetes.io/restartedAt annotation each.
    #[arg(long, help_heading = "Restarting")]
    pub restart: bool,

    /// With --restart: print the patches instead of sending them.
    #[arg(long, requires = "restart", help_heading = "Restarting")]
    pub dry_run: bool,

    /// With --restart: wait until each restarted workload is live (new pods started after the
    /// restart) and report the ones that are not.
    #[arg(
        long,
        short = 'w',
        alias = "watch",
        requires = "restart",
        conflicts_with = "dry_run",
        help_heading = "Restarting"
    )]
    pub wait: bool,

    /// How long --wait waits, e.g. 90s, 5m; 0 = 24h (kubectl's "no limit", bounded).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = DEFAULT_TIMEOUT,
        requires = "wait",
        help_heading = "Restarting"
    )]
    pub timeout: String,

    /// Output format.
    #[arg(short, long, value_parser = formats::<StaleOutcome>(no_help), default_value = "text", help_heading = "Output")]
    pub output: Format,
}

#[derive(Debug, Subcommand)]
pub enum ReleaseCommand {
    /// What `helm get metadata|manifest|values` and `helm history` show, decoded from the
    /// release's storage Secret or ConfigMap (base64, base64, gunzip, JSON). Values are
    /// redacted unless --show-values is given; rendered Secrets in the manifest always are.
    #[command(
        after_help = "Examples:\n  liveproof release show inventory -n apps\n  liveproof release show inventory -n apps --manifest --revision 34\n  liveproof release show inventory -n apps --history"
    )]
    Show(ReleaseShowArgs),
}

#[derive(Debug, Clone, PartialEq, Args)]
pub struct ReleaseShowArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// The release name.
    pub name: String,

    /// A revision other than the newest.
    #[arg(long, value_name = "N")]
    pub revision: Option<i64>,

    /// The rendered manifest, as `helm get manifest`.
    #[arg(long)]
    pub manifest: bool,

    /// Chart, version, status and times, as `helm get metadata` (the default).
    #[arg(long)]
    pub metadata: bool,

    /// The user-supplied values, as `helm get values` — redacted unless --show-values.
    #[arg(long)]
    pub values: bool,

    /// Every revision, as `helm history`.
    #[arg(long)]
    pub history: bool,

    /// Print values as they are. They may hold passwords and tokens.
    #[arg(long, requires = "values")]
    pub show_values: bool,

    /// Largest decoded release accepted, in bytes, up to 512 MiB (guards against a hostile or
    /// corrupt Secret: a gzip bomb stops there with an error naming the object).
    #[arg(long, value_name = "BYTES", default_value_t = liveproof_helm::DEFAULT_MAX_RELEASE_SIZE, value_parser = release_size)]
    pub max_release_size: usize,

    /// Read objects from a file or directory instead of a cluster.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["kubeconfig", "context", "max_response_size"])]
    pub from: Option<PathBuf>,

    #[command(flatten)]
    pub cluster: ClusterArgs,
}

const VERIFY_LONG_ABOUT: &str = "\
Collect the evidence for each target, print it, and exit with the verdict.

Workload checks, in order (cheap to conclusive):
  spec_readback        the pod template carries the expectations and what -f declares in it
  observed_generation  the controller has processed the current spec
  rollout_complete     updated/available replicas equal desired (status tier)
  pods_current         every serving pod is on the current revision; none from an old one Ready
  pod_spec             the running pods show the expectations (presence only; no values read)
  pod_restarted        every serving container started after the change (needs --since/--commit)
  traffic_current      every ready endpoint of the Services selecting its pods or a Rollout names is
                       a current pod; a Rollout's traffic weights total 100%, all on that revision
Helm/GitOps checks (release/, helmrelease/, kustomization/, application/; then their workloads):
  condition_fresh      Ready/Released (or Argo's last sync) changed after the change
  gitops_revision      the controller's source/applied revision is --commit (or --chart-version)
  release_revision     the newest Helm revision is deployed, and deployed after the change
  release_version      the installed chart version is --chart-version
  manifest_contains    the installed manifest contains each --expect
Flagger canary/, Knative ksvc/ checks (then <target>-primary or the revision's Deployment, as a
workload): condition_fresh (Promoted, Ready), rollout_complete (phase Succeeded; revision ready),
spec_readback (primary = target; the Revision's digests), traffic_current (canary weight 0, the
apex Service selecting only the primary; all of status.traffic on the latest revision).

Verdicts: not_live if a check failed; live only if pods_current and pod_restarted passed for
every workload reached, every expectation passed and nothing needed is unknown (never on status
fields alone); superseded if shown replaced by a later change; unproven otherwise.

What changed must be stated (--image, -f, -k, --expect-env, --expect-secret-ref, --expect, a
GitOps target's --commit, or --snapshot): restarted pods prove a rollout, not this change.
Every change flag applies to every target it is given with, or the command is refused (exit 2):
  --image, --expect-env, --expect-secret-ref  every kind (a Helm/GitOps target's workloads)
  --expect          release/, helmrelease/ (installed manifest), workloads (pod template YAML);
                    refused with kustomization/, application/, canary/, ksvc/
  --chart-version   release/, helmrelease/ only; refused with any other target";

const VERIFY_EXAMPLES: &str = "\
Exit codes:
  0  live          every target proven live by artifact evidence
  1  not live      a check failed
  2  error         bad input, the cluster unreachable, a request or --timeout ran out
  3  unproven      nothing failed, but the evidence to call it live is missing
  4  superseded    a later change replaced it (the report names it): nothing to roll back

Examples:
  # after a merge: is the new image running, in pods started after the merge?
  liveproof verify deploy inventory -n apps --since 1h --image ghcr.io/acme/inventory:1.4.0

  # CI verify job: the manifests as of the merge commit state the change; wait for it
  liveproof verify -f k8s/ -R --commit $GITHUB_SHA --wait --timeout 10m -o markdown

  # offline, on what `kubectl get -o yaml` printed
  kubectl -n apps get deploy,rs,pods -o yaml > dump.yaml
  liveproof verify deploy/inventory -n apps --from dump.yaml --since 2026-07-12T10:00:00Z \\
      --image ghcr.io/acme/inventory:1.4.0";

/// `verify --help` on its targets: how kubectl's forms are taken, then every kind of the
/// kind table ([`kind::targets_help`]).
fn targets_long_help() -> String {
    format!(
        "What to verify: KIND/NAME, NS/KIND/NAME, KIND NAME…, KIND/a,KIND/b (as kubectl).\n\n\
         As kubectl takes them: `deploy/a deploy/b`, `deploy/a,sts/b`, `apps/deploy/a`, or the \
         kind once and then its names: `deploy a b`, `deploy a,b`, `deploy,sts web` (a kind \
         word beside KIND/NAME words is refused, as kubectl refuses it). {} The others are \
         followed to the workloads they lead to (a Canary to its `-primary`), which are \
         verified too. `verification/NAME` verifies what that Verification states.",
        kind::targets_help()
    )
}

/// `verify --help` on `-l`: every workload kind of the kind table.
fn selector_long_help() -> String {
    format!(
        "Every workload whose labels match (as `kubectl get -l`).\n\n\
         Every {} whose labels match, in -n (or every namespace with -A), as `kubectl get -l` \
         selects: app=web, tier!=cache, env in (prod,staging), release, !canary. Targets given \
         too are verified as well; a selector that matches nothing is an error. Example: -l \
         app.kubernetes.io/part-of=shop",
        liveproof_evidence::TargetKind::workload_kinds("and", false)
    )
}

#[derive(Debug, Clone, PartialEq, Args)]
pub struct VerifyArgs {
    /// What to verify: KIND/NAME, NS/KIND/NAME, KIND NAME…, KIND/a,KIND/b (as kubectl).
    ///
    /// The long help, with the kinds of the kind table, is [`targets_long_help`]; TYPE
    /// completes to every kind's spelling (`deploy/`, `hr/`, …), and then NAME to the names
    /// of that kind in the cluster ([`crate::completion::targets`]).
    #[arg(
        value_name = "TARGET",
        long_help = targets_long_help(),
        add = ArgValueCompleter::new(crate::completion::targets),
        required_unless_present_any = ["snapshot", "manifests", "kustomize", "selector"]
    )]
    pub targets: Vec<String>,

    /// Every workload whose labels match (as `kubectl get -l`).
    ///
    /// The long help, naming the workload kinds of the kind table, is [`selector_long_help`].
    #[arg(
        short = 'l',
        long,
        long_help = selector_long_help(),
        value_name = "SELECTOR",
        conflicts_with = "snapshot",
        help_heading = "Targets"
    )]
    pub selector: Option<String>,

    /// Workloads these manifests declare: FILE, DIR, - (stdin); repeatable.
    ///
    /// As kubectl's -f: a file, a directory (its top level; with -R every directory under
    /// it; without -R, manifests below the top level are refused rather than left unverified)
    /// of .yaml, .yml and .json, or `-` for stdin. Each live pod template is held to every
    /// field the manifest declares in it (nothing is applied). With --commit, read as of that
    /// commit from --repo (a dirty work tree does not count); a relative path that is not
    /// there from the working directory is read from --repo. URLs are refused: liveproof
    /// reads no remote manifests. Targets given too are verified as well. Example: -f k8s/
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "PATH",
        conflicts_with = "snapshot",
        help_heading = "Targets"
    )]
    pub manifests: Vec<PathBuf>,

    /// With -f DIR: every directory under it too (as kubectl).
    #[arg(short = 'R', long, help_heading = "Targets")]
    pub recursive: bool,

    /// The workloads `kubectl kustomize DIR` builds; repeatable.
    ///
    /// Built by the real kubectl (LIVEPROOF_KUBECTL, else `kubectl` on PATH) within
    /// --request-timeout, then read as -f reads manifests. Refused with --commit (that reads
    /// the manifests as committed; kustomize builds the work tree).
    #[arg(
        short = 'k',
        long,
        value_name = "DIR",
        conflicts_with_all = ["snapshot", "commit"],
        help_heading = "Targets"
    )]
    pub kustomize: Vec<PathBuf>,

    /// Everything changed since the snapshot in DIR (needs --commit).
    ///
    /// Taken by `liveproof snapshot`; the snapshot's time is the change time. A snapshot of
    /// another commit is refused.
    #[arg(long, value_name = "DIR", requires = "commit", conflicts_with_all = ["targets", "from"], help_heading = "Targets")]
    pub snapshot: Option<PathBuf>,

    #[command(flatten)]
    pub change: ChangeArgs,

    /// Watch until live, a final failure, or --timeout (-w, --watch as kubectl).
    ///
    /// Needs a change time (--since, or --commit with its repository): without one nothing
    /// can become live.
    #[arg(long, short = 'w', alias = "watch", help_heading = "Waiting")]
    pub wait: bool,

    /// How long --wait waits: 90s, 1h30m, 300 (s); 0 = 24h [default: 5m].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = DEFAULT_TIMEOUT,
        hide_default_value = true,
        requires = "wait",
        help_heading = "Waiting"
    )]
    pub timeout: String,

    /// Report format.
    #[arg(short, long, value_parser = outputs::<Report>(report_help), default_value = "text", value_name = "FORMAT", help_heading = "Output")]
    pub output: Output,

    /// Print nothing but errors: the verdict is the exit code.
    #[arg(short, long, conflicts_with_all = ["output", "verbose"], help_heading = "Output")]
    pub quiet: bool,

    /// Also write the report to FILE (repeatable), in its extension's format.
    ///
    /// .json, .yaml/.yml, .xml (JUnit), .md, .html, .txt, or --report-format for one file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub report: Vec<PathBuf>,

    /// Append one JSON line per run to FILE, a deployment record (docs/metrics.md)
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub record: Option<PathBuf>,

    /// --record's shape: liveproof, devlake (needs --record-repo-url), datadog; docs/metrics.md
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value = "liveproof",
        requires = "record",
        help_heading = "Output",
        hide_short_help = true,
        hide_possible_values = true
    )]
    pub record_format: RecordFormat,

    /// The repository URL a DORA tool ties the commit to (--record-format devlake, datadog)
    #[arg(
        long,
        value_name = "URL",
        requires = "record",
        help_heading = "Output",
        hide_short_help = true
    )]
    pub record_repo_url: Option<String>,

    /// The environment deployed to (DevLake: PRODUCTION, STAGING, TESTING, DEVELOPMENT)
    #[arg(
        long,
        value_name = "ENV",
        requires = "record",
        help_heading = "Output",
        hide_short_help = true
    )]
    pub record_env: Option<String>,

    /// Exit 0, not 4, when superseded (for a Job); stderr names what replaced it
    #[arg(long, help_heading = "Output", hide_short_help = true)]
    pub superseded_ok: bool,

    /// The format of one --report file whose extension does not say: text, wide, json, yaml,
    /// name, markdown, html or junit (as -o names them)
    #[arg(long, value_parser = file_formats::<Report>(report_help), value_name = "FORMAT", requires = "report", help_heading = "Output", hide_short_help = true, hide_possible_values = true)]
    pub report_format: Option<Format>,

    /// Add failing containers' last N log lines (default 25).
    ///
    /// When a workload is not live, of each crashing or not-ready container. Off by default: logs can hold
    /// anything, secrets included — turn this on only where the report may show them.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "25", help_heading = "Output")]
    pub logs: Option<i64>,

    #[command(flatten)]
    pub log: Verbosity,

    #[command(flatten)]
    pub colour: Colour,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// Verify the same change in every context of the kubeconfig.
    ///
    /// A section per cluster (JSON: `clusters[]`), the verdict the worst of them; a cluster
    /// that cannot be reached is an error for it (the fleet unproven), never a pass.
    #[arg(long, conflicts_with_all = ["context", "from", "snapshot"], help_heading = CLUSTER_HEADING, hide_short_help = true)]
    pub all_contexts: bool,

    /// With several clusters (--context repeated, --all-contexts): how many at a time (1-256; all, up to 128)
    #[arg(long, value_name = "N", help_heading = CLUSTER_HEADING, hide_short_help = true)]
    pub max_concurrency: Option<usize>,

    /// Read what `kubectl get -o yaml` printed (files), not a cluster.
    ///
    /// Objects the dump lacks make their checks unknown, never pass. Targets that name no
    /// namespace are in -n, else the kubeconfig context's namespace (as live;
    /// --kubeconfig/--context only choose that, nothing is sent), else the one namespace of
    /// the dump that holds them (the report says so), else `default`.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["wait", "max_response_size"], help_heading = CLUSTER_HEADING)]
    pub from: Option<PathBuf>,

    /// Largest decoded Helm release accepted, in bytes, up to 512 MiB; a gzip bomb stops there
    /// [default: 67108864, 64 MiB]
    #[arg(long, value_name = "BYTES", default_value_t = liveproof_helm::DEFAULT_MAX_RELEASE_SIZE, value_parser = release_size, help_heading = CLUSTER_HEADING, hide_short_help = true, hide_default_value = true)]
    pub max_release_size: usize,
}

/// The heading of the kubectl-style flags, in every command that reaches a cluster.
const CLUSTER_HEADING: &str = "Cluster access (as kubectl)";

/// What each format of a verify report is.
fn report_help(format: Format) -> &'static str {
    match format {
        Format::Text => "A readable evidence table per target",
        Format::Wide => "The text report unfolded: every target's evidence and timeline, each check's source beside it, lines not wrapped",
        Format::Json => "The liveproof/v1 JSON report",
        Format::Yaml => "The same liveproof/v1 report as YAML",
        Format::Name => "A KIND.GROUP/NAME line per object, as kubectl's; the verdict: exit code",
        Format::Markdown => "For a PR comment or CI step summary, evidence folded",
        Format::Html => "One self-contained HTML page: the verdict, the evidence and an SVG timeline per target",
        Format::Junit => "JUnit XML, one testcase per check",
        Format::JsonPath => "jsonpath=TEMPLATE: kubectl's JSONPath over the JSON report, e.g. jsonpath='{.verdict}'",
        Format::CustomColumns => "custom-columns=HEADER:PATH,…: kubectl's table, a row per target, e.g. custom-columns=NAME:.name,VERDICT:.verdict",
        Format::Sarif => "",
    }
}

/// Formats that need no words in help.
fn no_help(_: Format) -> &'static str {
    ""
}

/// `-o FORMAT` of a command whose result is `M`: exactly the formats `M` is drawn in
/// ([`Render::FORMATS`]), so clap refuses any other at parse time (exit 2, naming these) and no
/// format is ever drawn as another. `help` says what each one is ("" for nothing).
fn formats<M: Render>(help: fn(Format) -> &'static str) -> impl TypedValueParser<Value = Format> {
    let values = M::FORMATS.iter().map(move |f| {
        let value = PossibleValue::new(f.name()).aliases(f.aliases().iter().copied());
        // clap hides aliases; help names them (`-o md`).
        let aliases = match f.aliases() {
            [] => String::new(),
            names => format!(" (also: {})", names.join(", ")),
        };
        match help(*f) {
            "" => value,
            words => value.help(format!("{words}{aliases}")),
        }
    });
    // Only names `Format::name` gave are possible, and each reads back as itself.
    PossibleValuesParser::new(values).map(|name| name.parse::<Format>().unwrap_or_default())
}

/// [`formats`] for a file (`--report-format`): the formats that take no template.
fn file_formats<M: Render>(
    help: fn(Format) -> &'static str,
) -> impl TypedValueParser<Value = Format> {
    OutputParser {
        formats: M::FORMATS,
        help,
        templates: false,
    }
    .map(|output| output.format())
}

/// [`formats`] for `-o`, where `jsonpath=TEMPLATE` and `custom-columns=SPEC` take their template
/// after `=` (parsed here: a broken one is refused at parse time, exit 2, naming what is wrong).
fn outputs<M: Render>(help: fn(Format) -> &'static str) -> impl TypedValueParser<Value = Output> {
    OutputParser {
        formats: M::FORMATS,
        help,
        templates: true,
    }
}

#[derive(Clone)]
struct OutputParser {
    formats: &'static [Format],
    help: fn(Format) -> &'static str,
    /// Whether the formats that take a template are offered.
    templates: bool,
}

impl OutputParser {
    fn offered(&self) -> impl Iterator<Item = Format> + '_ {
        self.formats
            .iter()
            .copied()
            .filter(|f| self.templates || !f.takes_template())
    }

    fn names(&self) -> PossibleValuesParser {
        let help = self.help;
        PossibleValuesParser::new(self.offered().map(move |f| {
            let value = PossibleValue::new(f.name()).aliases(f.aliases().iter().copied());
            // clap hides aliases; help names them (`-o md`).
            let aliases = match f.aliases() {
                [] => String::new(),
                names => format!(" (also: {})", names.join(", ")),
            };
            match help(f) {
                "" => value,
                words => value.help(format!("{words}{aliases}")),
            }
        }))
    }
}

impl TypedValueParser for OutputParser {
    type Value = Output;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Output, clap::Error> {
        let given = value.to_string_lossy();
        let (name, template) = match given.split_once('=') {
            Some((name, template)) if self.templates => (name, Some(template)),
            _ => (given.as_ref(), None),
        };
        // The name as every other value is checked: unknown, or not this command's, is clap's
        // "invalid value … [possible values: …]".
        let name = self
            .names()
            .parse_ref(cmd, arg, std::ffi::OsStr::new(name))?;
        let format = name.parse::<Format>().unwrap_or_default();
        Output::new(format, template).map_err(|e| {
            let mut err = clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("{e}\n\ntip: {}\n", e.hint()),
            );
            err = err.with_cmd(cmd);
            err
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let values: Vec<PossibleValue> = self.names().possible_values()?.collect();
        Some(Box::new(values.into_iter()))
    }
}

/// The change statement: one type for the command line (clap) and the MCP verify tool (serde,
/// its JSON schema generated from this), printed back as flags by [`ChangeArgs::flags`].
#[derive(
    Debug, Clone, PartialEq, Args, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[command(next_help_heading = "What changed")]
#[serde(default)]
pub struct ChangeArgs {
    /// When the change merged: RFC 3339, or how long ago (10m, 2h, 1d).
    ///
    /// RFC 3339 with an offset (2026-07-12T10:00:00Z, 2026-07-12T12:00:00+02:00), or how long
    /// ago, as kubectl writes durations, with days too (90s, 10m, 2h, 1h30m, 1d); a number is
    /// seconds (600), not a Unix time. A time in the future is refused.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,

    /// The change's commit (SHA or ref); its committer time is --since.
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,

    /// The git repository --commit is read from.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_REPO)]
    pub repo: PathBuf,

    /// The image (tag or digest) the workload must run; repeatable.
    ///
    /// Matched per container by repository; a digest (repo@sha256:…, repo:tag@sha256:…) is matched against the template and each
    /// serving pod's running digest (index or platform entry). Repeatable.
    /// Example: --image ghcr.io/acme/inventory:1.4.0
    #[arg(long, value_name = "REF")]
    pub image: Vec<String>,

    /// An env var NAME the running containers must define (its value is never read). Repeatable.
    #[arg(long, value_name = "NAME", hide_short_help = true)]
    pub expect_env: Vec<String>,

    /// A Secret (and key) the containers must reference, by env or volume (presence only).
    /// Repeatable.
    #[arg(long, value_name = "SECRET[/KEY]", hide_short_help = true)]
    pub expect_secret_ref: Vec<String>,

    /// The installed release's chart version (release/, helmrelease/ only)
    #[arg(long, value_name = "VERSION")]
    pub chart_version: Option<String>,

    /// Text (or re:REGEX) the manifest/template must contain; repeatable.
    ///
    /// The installed release's rendered manifest (release/, helmrelease/), or a workload's pod template rendered as YAML (deployment/, statefulset/,
    /// daemonset/); refused with kustomization/, application/. Repeatable.
    /// Example: --expect secretKeyRef
    #[arg(long, value_name = "TEXT")]
    pub expect: Vec<String>,

    /// Hold every tagged image to its tag's current digest, not only mutable ones (no tag,
    /// `:latest`). Images pinned by digest are never looked up.
    #[arg(long, conflicts_with = "no_registry", hide_short_help = true)]
    pub check_digests: bool,

    /// Never ask a registry what a tag resolves to (image_digest_current is left out).
    #[arg(long, hide_short_help = true)]
    pub no_registry: bool,

    /// A registry (HOST[:PORT]) spoken to over plain HTTP, e.g. a local mirror. Repeatable.
    #[arg(long, value_name = "HOST", hide_short_help = true)]
    pub insecure_registry: Vec<String>,

    /// A URL where the server reports its version; it must report --expect-version.
    ///
    /// E.g. /version or /healthz; the server_version check passes only when it reports
    /// --expect-version. Repeatable.
    #[arg(
        long,
        value_name = "URL",
        requires = "expect_version",
        hide_short_help = true
    )]
    pub version_url: Vec<String>,

    /// The version the --version-url servers must report: one for all, or one per URL.
    #[arg(
        long,
        value_name = "VERSION",
        requires = "version_url",
        hide_short_help = true
    )]
    pub expect_version: Vec<String>,

    /// Read the version from this JSON field of the response (e.g. .version or .build.tag):
    /// one for all URLs, or one per URL.
    #[arg(
        long,
        value_name = "PATH",
        requires = "version_url",
        hide_short_help = true
    )]
    pub version_json: Vec<String>,
}

impl Default for ChangeArgs {
    /// Nothing stated; `--repo` is the working directory, as on the command line.
    fn default() -> Self {
        ChangeArgs {
            since: None,
            commit: None,
            repo: PathBuf::from(DEFAULT_REPO),
            image: Vec::new(),
            expect_env: Vec::new(),
            expect_secret_ref: Vec::new(),
            chart_version: None,
            expect: Vec::new(),
            check_digests: false,
            no_registry: false,
            insecure_registry: Vec::new(),
            version_url: Vec::new(),
            expect_version: Vec::new(),
            version_json: Vec::new(),
        }
    }
}

impl ChangeArgs {
    /// The statement as flags and their values (`None` for a switch), in one order: what the
    /// suggested commands of next steps and the MCP server's call log print.
    pub fn flags(&self) -> Vec<(&'static str, Option<String>)> {
        let mut out = Vec::new();
        let repo = self.repo.to_string_lossy();
        let ones = [
            ("since", self.since.as_deref()),
            ("commit", self.commit.as_deref()),
            (
                "repo",
                (self.repo != std::path::Path::new(DEFAULT_REPO)).then_some(&*repo),
            ),
            ("chart-version", self.chart_version.as_deref()),
        ];
        for (flag, value) in ones {
            if let Some(v) = value {
                out.push((flag, Some(v.to_string())));
            }
        }
        let lists: [(&'static str, &Vec<String>); 8] = [
            ("image", &self.image),
            ("expect-env", &self.expect_env),
            ("expect-secret-ref", &self.expect_secret_ref),
            ("expect", &self.expect),
            ("insecure-registry", &self.insecure_registry),
            ("version-url", &self.version_url),
            ("expect-version", &self.expect_version),
            ("version-json", &self.version_json),
        ];
        for (flag, values) in lists {
            out.extend(values.iter().map(|v| (flag, Some(v.clone()))));
        }
        if self.check_digests {
            out.push(("check-digests", None));
        }
        if self.no_registry {
            out.push(("no-registry", None));
        }
        out
    }
}

/// `--record-format`: whose shape `--record` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// liveproof's own record (liveproof/record/v1)
    #[default]
    Liveproof,
    /// Apache DevLake's incoming-webhook deployment (deploymentCommits)
    Devlake,
    /// Datadog's DORA Metrics deployment event (POST /api/v2/dora/deployment)
    Datadog,
}

#[derive(Debug, Clone, PartialEq, Eq, Args)]
#[command(next_help_heading = CLUSTER_HEADING)]
pub struct ClusterArgs {
    /// Namespace for targets that name none (default: the context's).
    #[arg(short, long, value_name = "NS", add = ArgValueCompleter::new(crate::completion::namespaces))]
    pub namespace: Option<String>,

    /// Look targets that name no namespace up in every namespace.
    ///
    /// As with kubectl, -A wins over -n (the namespace is then ignored).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config).
    ///
    /// Without any, the pod's service account when run in a cluster.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context (verify: repeat it for several clusters).
    ///
    /// `verify` takes it more than once, to verify the same change in each of those clusters
    /// (a section per cluster; the verdict the worst).
    #[arg(long, value_name = "NAME", add = ArgValueCompleter::new(crate::completion::contexts))]
    pub context: Vec<String>,

    /// Per-request bound: 10s, 1m, 5 (s); 0 = none [default: 30s].
    ///
    /// As kubectl's --request-timeout: the connection, TLS and the answer of each API
    /// request, and each registry and --version-url read. A bare number is seconds. `0`
    /// means no per-request limit, as in kubectl — but nothing waits without a bound: a
    /// request then still ends after 24 hours, and with --wait when --timeout does.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = DEFAULT_REQUEST_TIMEOUT,
        hide_default_value = true,
        allow_hyphen_values = true
    )]
    pub request_timeout: String,

    /// Cap on the API responses being read at once: 256Mi, 1Gi [default: 256Mi].
    ///
    /// Past it (only a flood: a page of a list is 5,000 objects), the command ends naming
    /// this flag instead of taking the machine's memory. Clusters read at once (--context
    /// repeated, --all-contexts) share it, each at least 128Mi. 1Mi to 16Gi (Ki, Mi, Gi; K, M, G).
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = response_size,
        allow_hyphen_values = true,
        hide_short_help = true
    )]
    pub max_response_size: Option<usize>,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub log: Verbosity,

    #[command(flatten)]
    pub colour: Colour,

    /// Output format: the story with both reports (text, markdown), or one JSON document with
    /// both reports (`before`, `after`) and nothing else on stdout.
    #[arg(short, long, value_parser = formats::<DemoOutcome>(demo_help), default_value = "text")]
    pub output: Format,
}

/// What each format of the demo is.
fn demo_help(format: Format) -> &'static str {
    match format {
        Format::Text => "The story, with each verification's evidence table",
        Format::Json => "One JSON document: {\"schema\": \"liveproof/demo/v1\", \"before\": REPORT, \"after\": REPORT, …}",
        Format::Markdown => "The story as Markdown, each verification as liveproof's Markdown report",
        _ => "",
    }
}

#[derive(Debug, Args)]
pub struct SimArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// A file or directory of Kubernetes objects (YAML/JSON) to serve.
    #[arg(long, value_name = "PATH")]
    pub fixtures: Option<PathBuf>,

    /// Serve the demo story instead of fixtures.
    #[arg(long, conflicts_with = "fixtures")]
    pub demo: bool,

    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,

    /// Write the kubeconfig pointing at the simulator here (default: a temporary file, removed
    /// on exit; its path is printed). Example: --kubeconfig-out ./sim.kubeconfig
    #[arg(long, value_name = "PATH")]
    pub kubeconfig_out: Option<PathBuf>,

    /// The kubeconfig's default namespace (default: the demo's namespace `apps` with --demo,
    /// else `default`). Example: -n apps
    #[arg(short, long)]
    pub namespace: Option<String>,

    /// Fault injection: delay every response by this long (default: none), to try
    /// --request-timeout. Example: --latency 2s
    #[arg(long, value_name = "DURATION", value_parser = parse_latency)]
    pub latency: Option<std::time::Duration>,

    /// Fault injection: the next N requests answer HTTP CODE with a Kubernetes Status (a 429
    /// also carries Retry-After: 1). Example: --fail-requests 3:503 or --fail-requests 1:429
    #[arg(long, value_name = "N:CODE", value_parser = parse_fail_requests)]
    pub fail_requests: Option<FailRequests>,

    /// Fault injection: every watch is closed by the server after N events (as API servers
    /// and proxies end watches); clients must watch again. Example: --close-watches-after 1
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub close_watches_after: Option<u64>,

    /// Fault injection: every watch expires at once (an in-stream ERROR event, 410 Expired, as
    /// when its resourceVersion was compacted away); clients must list again from scratch.
    #[arg(long)]
    pub expire_watches: bool,
}

/// `--fail-requests N:CODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailRequests {
    pub count: u64,
    pub code: u16,
}

fn parse_fail_requests(given: &str) -> Result<FailRequests, String> {
    let usage = || format!("`{given}` is not N:CODE (e.g. 3:503 or 1:429)");
    let (count, code) = given.split_once(':').ok_or_else(usage)?;
    let count: u64 = count.trim().parse().map_err(|_| usage())?;
    let code: u16 = code.trim().parse().map_err(|_| usage())?;
    if count == 0 {
        return Err(format!("`{given}`: N must be at least 1"));
    }
    if !(400..=599).contains(&code) {
        return Err(format!(
            "`{given}`: CODE must be an HTTP error status (400-599)"
        ));
    }
    Ok(FailRequests { count, code })
}

fn parse_latency(given: &str) -> Result<std::time::Duration, String> {
    crate::duration::parse(given)
        .map_err(|why| format!("`{given}` is not a duration ({why}); e.g. 500ms, 2s, 1m"))
}

/// `liveproof schema` takes no options yet.
#[derive(Debug, Args)]
pub struct SchemaArgs {}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// Also offer restart_stale, which restarts stale workloads (writes to the cluster).
    #[arg(long)]
    pub allow_writes: bool,

    /// Let the verify tool's `logs` show the last log lines of a not-ready container. Without
    /// it, a call asking for logs is refused: logs can hold anything, secrets included. Shown,
    /// what looks like a credential in them (a `password=` or `token:` value, a URL's
    /// password) is masked.
    #[arg(long)]
    pub allow_logs: bool,

    /// A kubeconfig the tools' `kubeconfig` argument may name. Repeatable. Besides these, only
    /// the files $KUBECONFIG lists and ~/.kube/config are accepted: an agent cannot make the
    /// server read any other file as a kubeconfig.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Vec<PathBuf>,

    /// A directory (or file) whose manifests the tools' `from` and `manifests` arguments may
    /// read. Repeatable. Without it, a call naming files is refused: an agent cannot make the
    /// server read any file it can (each path, and each file a directory holds, is checked
    /// with symlinks and `..` resolved, whole directory names at a time).
    #[arg(long, value_name = "DIR")]
    pub allow_from: Vec<PathBuf>,

    /// A URL prefix (https://status.example.com/version) or a host (status.example.com,
    /// status.example.com:8443) the verify tool's `version_url` may read. Repeatable. Without
    /// it, a call naming a URL is refused: an agent cannot make the server read cloud metadata
    /// or an internal service. Compared parsed (scheme, host, port, whole path segments);
    /// every redirect is held to it too, and a link-local or cloud metadata address
    /// (169.254.0.0/16, fe80::/10, metadata.google.internal) is read only when an entry names
    /// it itself, never through a name that resolves to it.
    #[arg(long, value_name = "URL|HOST")]
    pub allow_version_url: Vec<String>,
}

const LINT_LONG_ABOUT: &str = "\
Before the merge: read the repository at PATH and find the changes that will merge green and
never deploy, or deploy silently wrong. Nothing is rendered, applied or interpolated: Helm
templates are read as text, kustomizations are read (never built), and no Secret value is read.

Rules (ids as in the output):
  chartversion-not-bumped  error    Flux HelmRelease (reconcileStrategy ChartVersion or unset, chart
                                    from a GitRepository): the chart changed, Chart.yaml's version not
  mutable-tag-no-restart   warning  image without tag or :latest, no digest, nothing restarts it
                                    (error when the change leaves the pod template identical)
  config-without-restart   warning  env/envFrom/volume from a Secret or ConfigMap, no checksum/*
                                    or Reloader annotation: config is read at start
  gitops-suspended         error    Flux spec.suspend: true (Argo CD skip-reconcile) over the change
  argocd-manual-sync       warning  Argo CD Application without syncPolicy.automated over the change
  argocd-pinned-revision   warning  Argo CD targetRevision pinned to a tag/commit over the change
  manual-promotion         error    Argo Rollout (pause without a duration, autoPromotionEnabled:
                                    false, paused) or Flagger confirm webhook, nobody promotes it

What changed comes from `git diff --name-only BASE HEAD` (the git binary). --base defaults to the
merge-base with origin/main when that exists, else HEAD~1; --head defaults to HEAD (committed
files only). Outside a git repository every file counts as changed (a note says so).

Exit codes: 0 no error-level finding, 1 an error-level finding, 2 usage error (an unknown
revision, --base outside a repository).";

/// `liveproof lint [PATH] [--base REF] [--head REF] [-o text|json|sarif]`.
#[derive(Debug, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub log: Verbosity,

    /// The repository (or the directory in it holding the GitOps tree) to lint; chart paths in
    /// HelmReleases are read relative to it.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    /// Diff from this revision [default: merge-base with origin/main, else HEAD~1].
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    /// Lint the files as of this revision [default: HEAD].
    #[arg(long, value_name = "REF")]
    pub head: Option<String>,

    /// Report format: text, json, or sarif (SARIF 2.1.0, for code-scanning upload).
    #[arg(short, long, value_parser = formats::<liveproof_lint::Linted>(no_help), default_value = "text")]
    pub output: Format,
}

impl Cli {
    /// How much `-v` asked for, given before the subcommand or after it.
    pub fn verbosity(&self) -> u8 {
        let after = match &self.command {
            Command::Verify(args) => args.log,
            Command::Demo(args) => args.log,
            Command::Snapshot(args) => args.log,
            Command::Rollback(args) => args.log,
            Command::Stale(args) => args.log,
            Command::Release(ReleaseCommand::Show(args)) => args.log,
            Command::Sim(args) => args.log,
            Command::Lint(args) => args.log,
            Command::Mcp(args) => args.log,
            Command::Auth(args) => args.log,
            Command::Controller(args) => Verbosity {
                verbose: args.verbose,
            },
            Command::Skill
            | Command::Schema(_)
            | Command::Completion(_)
            | Command::Man(_)
            | Command::Version => Verbosity::default(),
        };
        self.verbose.saturating_add(after.verbose)
    }

    /// Whether `-q` asked for nothing but errors (verify).
    pub fn quiet(&self) -> bool {
        matches!(&self.command, Command::Verify(args) if args.quiet)
    }

    /// What `--color` asked for (only verify and demo draw colour).
    pub fn color(&self) -> ColorChoice {
        match &self.command {
            Command::Verify(args) => args.colour.color,
            Command::Demo(args) => args.colour.color,
            _ => Colour::default().color,
        }
    }

    /// The document an error is answered in on stdout: what `-o` asked for, when that is a
    /// format an error document can be (json, yaml, markdown, junit; not text, name, sarif).
    pub fn error_format(&self) -> Option<liveproof_report::Format> {
        let asked = match &self.command {
            Command::Verify(args) => args.output.format(),
            Command::Stale(args) => args.output,
            Command::Demo(args) => args.output,
            Command::Lint(args) => args.output,
            _ => return None,
        };
        error_document(asked.name())
    }
}

/// The program name a kubectl plugin is run by (`kubectl liveproof …` runs `kubectl-liveproof`,
/// itself or a link to the binary, as krew installs it).
pub const PLUGIN_NAME: &str = "kubectl-liveproof";

/// Whether the binary runs as kubectl's plugin: `argv[0]`'s file name is [`PLUGIN_NAME`].
pub fn invoked_as_plugin(argv0: Option<&std::ffi::OsStr>) -> bool {
    argv0
        .and_then(|a| std::path::Path::new(a).file_stem())
        .is_some_and(|name| name == PLUGIN_NAME)
}

/// The command line, as the binary was run: as kubectl's plugin, its usage lines, help and
/// examples say `kubectl liveproof` (what the user types), never `liveproof` or
/// `kubectl-liveproof`.
pub fn command_as(plugin: bool) -> clap::Command {
    let command = <Cli as clap::CommandFactory>::command();
    if plugin {
        as_plugin(command.bin_name("kubectl liveproof"))
    } else {
        command
    }
}

/// Parses `args` (the program name first) as the binary run as [`command_as`] says.
pub fn parse(args: Vec<std::ffi::OsString>, plugin: bool) -> Result<Cli, clap::Error> {
    let mut command = command_as(plugin);
    let matches = command.try_get_matches_from_mut(args)?;
    <Cli as clap::FromArgMatches>::from_arg_matches(&matches).map_err(|e| e.with_cmd(&command))
}

/// `command` and every subcommand under it with `liveproof SUBCOMMAND` in their texts said
/// as `kubectl liveproof SUBCOMMAND`.
fn as_plugin(command: clap::Command) -> clap::Command {
    let said = |text: Option<&clap::builder::StyledStr>| text.map(|t| plugin_text(&t.to_string()));
    let mut command = command;
    if let Some(text) = said(command.get_about()) {
        command = command.about(text);
    }
    if let Some(text) = said(command.get_long_about()) {
        command = command.long_about(text);
    }
    if let Some(text) = said(command.get_after_help()) {
        command = command.after_help(text);
    }
    if let Some(text) = said(command.get_after_long_help()) {
        command = command.after_long_help(text);
    }
    command
        .mut_args(|arg| {
            let help = arg.get_help().map(|t| plugin_text(&t.to_string()));
            let long = arg.get_long_help().map(|t| plugin_text(&t.to_string()));
            let arg = match help {
                Some(text) => arg.help(text),
                None => arg,
            };
            match long {
                Some(text) => arg.long_help(text),
                None => arg,
            }
        })
        .mut_subcommands(as_plugin)
}

/// `text` with each `liveproof SUBCOMMAND` (a command as typed, not the word in prose, nor
/// `kubectl liveproof` already) as `kubectl liveproof SUBCOMMAND`.
pub fn plugin_text(text: &str) -> String {
    const WORD: &str = "liveproof ";
    let subcommands: Vec<String> = <Cli as clap::CommandFactory>::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(at) = rest.find(WORD) {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let after = &from[WORD.len()..];
        let next_word = after
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .next()
            .unwrap_or_default();
        let standalone = !out
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || "-_/.".contains(c));
        let already = out.ends_with("kubectl ");
        if standalone && !already && subcommands.iter().any(|s| s == next_word) {
            out.push_str("kubectl ");
        }
        out.push_str(WORD);
        rest = after;
    }
    out.push_str(rest);
    out
}

/// kubectl's verbosity levels (`-v=6`, `-v 6`, `-v6`, `--v=6`, `--v 6`) as our `-v` count:
/// 0 is nothing, 1 to 6 are `-v` (kubectl's 6 logs each request's URL and status, which `-v`
/// does), 7 and up `-vv`. `-v` and `-vv` as ever. A word that is another flag's value (`-n
/// -v`) is left alone, and nothing after `--`. A level that is not a number is refused.
pub fn kubectl_levels(
    args: Vec<std::ffi::OsString>,
) -> Result<Vec<std::ffi::OsString>, liveproof_report::Problem> {
    let takes_value = crate::completion::value_flags(&<Cli as clap::CommandFactory>::command());
    let level = |word: &str,
                 value: &str|
     -> Result<Option<&'static str>, liveproof_report::Problem> {
        match value.parse::<u32>() {
            Ok(0) => Ok(None),
            Ok(1..=6) => Ok(Some("-v")),
            Ok(_) => Ok(Some("-vv")),
            Err(_) => Err(liveproof_report::Problem::new(
                format!("`{word}`: a verbosity level is a number (as kubectl's -v=6), not `{value}`"),
                Some("give -v (each API request, its status and time), -vv (more), or a kubectl level: -v=6".into()),
            )),
        }
    };
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.into_iter().peekable();
    if let Some(program) = words.next() {
        out.push(program);
    }
    let is_number = |w: &std::ffi::OsString| {
        w.to_str()
            .is_some_and(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
    };
    while let Some(word) = words.next() {
        let Some(text) = word.to_str().map(str::to_string) else {
            out.push(word);
            continue;
        };
        if text == "--" {
            out.push(word);
            out.extend(words);
            break;
        }
        let mapped = if let Some(value) = text
            .strip_prefix("--v=")
            .or_else(|| text.strip_prefix("-v="))
        {
            Some(level(&text, value)?)
        } else if text == "--v" {
            match words.next() {
                Some(value) if is_number(&value) => Some(level(&text, &value.to_string_lossy())?),
                _ => {
                    return Err(liveproof_report::Problem::new(
                        "--v needs a level (as kubectl's --v=6)".to_string(),
                        Some(
                            "give --v=6 (each API request, its status and time), or -v / -vv"
                                .into(),
                        ),
                    ))
                }
            }
        } else if text == "-v" && words.peek().is_some_and(is_number) {
            let value = words.next().unwrap_or_default();
            Some(level(&text, &value.to_string_lossy())?)
        } else if let Some(value) = text
            .strip_prefix("-v")
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        {
            Some(level(&text, value)?)
        } else {
            None
        };
        match mapped {
            Some(Some(flag)) => out.push(flag.into()),
            Some(None) => {}
            None => {
                let consumes = takes_value.contains(text.as_str());
                out.push(word);
                if consumes {
                    if let Some(value) = words.next() {
                        out.push(value);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// [`Cli::error_format`] read off raw arguments clap refused: the subcommand is the first word
/// naming one, and its `-o` value (`-o json`, `-ojson`, `-o=json`, `--output json`,
/// `--output=json`; the last one given) counts only if that subcommand takes it.
pub fn error_format_in(argv: &[String]) -> Option<liveproof_report::Format> {
    let cli = <Cli as clap::CommandFactory>::command();
    let args: Vec<&str> = argv
        .iter()
        .skip(1)
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .collect();
    let command = args.iter().find_map(|a| cli.find_subcommand(a))?;
    let output = command.get_arguments().find(|a| a.get_id() == "output")?;
    let mut asked = None;
    for (i, arg) in args.iter().enumerate() {
        let value = match *arg {
            "-o" | "--output" => args.get(i + 1).copied(),
            _ => arg
                .strip_prefix("--output=")
                .or_else(|| arg.strip_prefix("-o").filter(|v| !v.is_empty()))
                .map(|v| v.strip_prefix('=').unwrap_or(v)),
        };
        if value.is_some() {
            asked = value;
        }
    }
    let asked = asked?;
    output
        .get_possible_values()
        .iter()
        .find(|v| v.matches(asked, false))
        .and_then(|v| error_document(v.get_name()))
}

/// The format named `name` (a canonical `-o` value), if an error document can be drawn in it.
fn error_document(name: &str) -> Option<Format> {
    name.parse()
        .ok()
        .filter(|f| ErrorReport::FORMATS.contains(f))
}

/// What clap said, as a [`Problem`](liveproof_report::Problem): its first paragraph is the
/// message (`error: ` dropped), its `tip:` lines the hint, else where the usage is.
pub fn clap_problem(err: &clap::Error) -> liveproof_report::Problem {
    let rendered = err.render().to_string();
    let mut paragraphs = rendered.split("\n\n").map(str::trim);
    let first = paragraphs.next().unwrap_or_default();
    let message = first.strip_prefix("error:").unwrap_or(first).trim();
    let rest: Vec<&str> = paragraphs.collect();
    let mut hints: Vec<String> = rest
        .iter()
        .flat_map(|p| p.lines())
        .filter_map(|l| l.trim().strip_prefix("tip:"))
        .map(|t| t.trim().to_string())
        .collect();
    if hints.is_empty() && err.kind() == clap::error::ErrorKind::ArgumentConflict {
        if message.contains("'--quiet'") && message.contains("'--output") {
            hints.push("-q prints no report: the verdict is the exit code. Drop -o, or drop -q; to keep a report with -q, write it to a file (--report report.json)".into());
        } else if message.contains("'--quiet'") && message.contains("'--verbose") {
            hints.push("-q says nothing but errors and -v logs more: give one of them".into());
        }
    }
    if hints.is_empty() {
        if let Some(usage) = rest.iter().find_map(|p| p.strip_prefix("Usage:")) {
            hints.push(format!("usage: {}; see --help", usage.trim()));
        }
    }
    liveproof_report::Problem {
        message: message.to_string(),
        hint: (!hints.is_empty()).then(|| hints.join("\n")),
    }
}

/// `--max-release-size`: 1 byte to [`liveproof_helm::MAX_RELEASE_SIZE`]. Unbounded, a gzip bomb
/// under a huge limit made the process abort on allocation instead of saying what was wrong.
/// `--max-response-size`: bytes, or a Kubernetes quantity (`256Mi`, `1Gi`, `500M`; `KiB`,
/// `MiB`, `GiB` and `KB`, `MB`, `GB` as people write them), from 1 MiB to 16 GiB.
fn response_size(given: &str) -> Result<usize, String> {
    const MIB: u64 = 1024 * 1024;
    let text = given.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit_bytes: u64 = match unit.trim() {
        "" => 1,
        "Ki" | "KiB" => 1024,
        "Mi" | "MiB" => MIB,
        "Gi" | "GiB" => 1024 * MIB,
        "k" | "K" | "KB" => 1000,
        "M" | "MB" => 1000 * 1000,
        "G" | "GB" => 1000 * 1000 * 1000,
        other => {
            return Err(format!(
                "`{other}` is not a unit: use Ki, Mi, Gi (or K, M, G), e.g. 256Mi or 1Gi"
            ))
        }
    };
    let bytes = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit_bytes))
        .ok_or_else(|| format!("`{given}` is not a size: e.g. 256Mi, 1Gi, or a number of bytes"))?;
    let (least, most) = (MIB, 16 * 1024 * MIB);
    if !(least..=most).contains(&bytes) {
        return Err(format!(
            "{bytes} bytes is outside 1Mi to 16Gi: less cannot hold a page of a list, more is not a bound"
        ));
    }
    usize::try_from(bytes)
        .map_err(|_| format!("{bytes} bytes is more than this machine can address"))
}

/// `--max-release-size`: 1 byte to [`liveproof_helm::MAX_RELEASE_SIZE`].
pub(crate) fn release_size(given: &str) -> Result<usize, String> {
    let bytes: usize = given
        .trim()
        .parse()
        .map_err(|_| format!("`{given}` is not a number of bytes (e.g. 67108864 for 64 MiB)"))?;
    let most = liveproof_helm::MAX_RELEASE_SIZE;
    if !(1..=most).contains(&bytes) {
        return Err(format!(
            "{bytes} bytes is outside 1 to {most} ({} MiB): a release larger than that is not read",
            most / (1024 * 1024)
        ));
    }
    Ok(bytes)
}

// `liveproof auth`'s arguments (run by crate::auth).

pub const AUTH_LONG_ABOUT: &str = "\
List, for the current identity (the kubeconfig's user, or the pod's ServiceAccount), which reads
liveproof verify needs it may and may not make, as kubectl auth can-i would answer each: one
SelfSubjectAccessReview per read and namespace, nothing else is read. Each read names the checks
it feeds and, when denied, the RBAC rule that would allow it and the shipped role that grants it
(deploy/rbac-readonly.yaml, deploy/rbac-namespaced/, deploy/rbac-no-secrets.yaml).

Namespaced reads are asked in each -n (repeatable; default: the context's namespace), or across
every namespace with -A. TARGETs (deploy/web, release/web, NS/KIND/NAME) narrow the list to the
reads their kinds need, in their namespaces.

A read is required when every verify of those targets sends it (without targets: every verify
of any kind); the others are sent only with a flag or on some paths (--wait's watches, --logs,
the Warning events of a target not live, a mutable tag's nodes and pull Secrets, another kind's
objects) and are listed with when.

Exit codes: 0 every required read is allowed; 1 a required read is denied (the list says which);
2 an error (the cluster could not be reached, or it could not answer the reviews).

Examples:
  liveproof auth -n apps
  liveproof auth release/web deploy/api -n apps -o json
  kubectl liveproof auth -A";

/// `liveproof auth`.
#[derive(Debug, Args)]
pub struct AuthArgs {
    /// What to verify (KIND/NAME or NS/KIND/NAME): only the reads their kinds need.
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,

    /// Namespace to ask about (repeatable; default: the context's).
    #[arg(short, long, value_name = "NS")]
    pub namespace: Vec<String>,

    /// Ask about every namespace at once (a ClusterRoleBinding's reach).
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,

    /// Path to the kubeconfig (default: $KUBECONFIG, ~/.kube/config; in a pod, the service account).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// Bound on each API request: 10s, 1m, 5 (s) [default: 30s].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = DEFAULT_REQUEST_TIMEOUT,
        hide_default_value = true,
        allow_hyphen_values = true
    )]
    pub request_timeout: String,

    /// Output format.
    #[arg(short, long, value_enum, default_value = "text")]
    pub output: AuthFormat,

    #[command(flatten)]
    pub log: Verbosity,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthFormat {
    /// A table: one line per read and namespace.
    Text,
    /// One JSON document ({"schema": "liveproof/auth/v1", …}).
    Json,
}

impl AuthFormat {
    pub fn format(self) -> Format {
        match self {
            AuthFormat::Text => Format::Text,
            AuthFormat::Json => Format::Json,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    /// `verify --help` names every kind of the kind table, with its short names: a kind added
    /// to `KINDS` and not to the help fails here.
    #[test]
    fn the_targets_help_names_every_kind_of_the_table() {
        let cli = Cli::command();
        let verify = cli.find_subcommand("verify").expect("verify");
        let targets = verify
            .get_arguments()
            .find(|a| a.get_id() == "targets")
            .expect("targets");
        let help = targets
            .get_long_help()
            .or(targets.get_help())
            .expect("help")
            .to_string();
        for kind in liveproof_evidence::KINDS {
            for name in std::iter::once(&kind.cli_name).chain(kind.short) {
                assert!(help.contains(name), "{name} missing from: {help}");
            }
        }
    }

    /// `-o`'s values, as clap offers them to `command`.
    fn offered(command: &str) -> Vec<String> {
        let cli = Cli::command();
        let sub = cli.find_subcommand(command).expect("a subcommand");
        let output = sub
            .get_arguments()
            .find(|a| a.get_id() == "output")
            .expect("takes -o");
        output
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect()
    }

    fn names(formats: &[Format]) -> Vec<String> {
        formats.iter().map(|f| f.name().to_string()).collect()
    }

    #[test]
    fn each_command_offers_exactly_the_formats_its_result_is_drawn_in() {
        assert_eq!(offered("verify"), names(Report::FORMATS));
        assert_eq!(offered("stale"), names(StaleOutcome::FORMATS));
        assert_eq!(offered("demo"), names(DemoOutcome::FORMATS));
        assert_eq!(offered("lint"), names(liveproof_lint::Linted::FORMATS));
    }

    #[test]
    fn a_format_a_command_cannot_draw_is_refused_when_parsed_naming_the_ones_it_can() {
        for (argv, allowed) in [
            (&["liveproof", "stale", "-o", "markdown"][..], "text, json"),
            (&["liveproof", "lint", "-o", "junit"], "text, json, sarif"),
            (
                &["liveproof", "demo", "-o", "sarif"],
                "text, json, markdown",
            ),
            (
                &["liveproof", "verify", "deploy/x", "-o", "sarif"],
                "text, wide, json, yaml, name, markdown, html, junit, jsonpath, custom-columns",
            ),
            (
                &["liveproof", "verify", "deploy/x", "-o", "sarif={.x}"],
                "text, wide, json, yaml, name, markdown, html, junit, jsonpath, custom-columns",
            ),
            (
                &[
                    "liveproof",
                    "verify",
                    "deploy/x",
                    "--report",
                    "r",
                    "--report-format",
                    "sarif",
                ],
                "text, wide, json, yaml, name, markdown, html, junit",
            ),
        ] {
            let err = Cli::try_parse_from(argv).expect_err("refused");
            assert_eq!(err.exit_code(), 2, "{argv:?}");
            let said = err.render().to_string();
            assert!(
                said.contains(&format!("[possible values: {allowed}]")),
                "{argv:?}: {said}"
            );
        }
    }

    #[test]
    fn every_name_and_alias_offered_reads_back_as_its_format() {
        for (argv, format) in [
            (
                &["liveproof", "verify", "deploy/x", "-o", "md"][..],
                Format::Markdown,
            ),
            (&["liveproof", "verify", "deploy/x"], Format::Text),
            (
                &["liveproof", "verify", "deploy/x", "-o", "yaml"],
                Format::Yaml,
            ),
            (
                &["liveproof", "verify", "deploy/x", "-o", "name"],
                Format::Name,
            ),
            (&["liveproof", "demo", "-o", "md"], Format::Markdown),
            (&["liveproof", "lint", "-o", "sarif"], Format::Sarif),
            (&["liveproof", "stale", "-o", "json"], Format::Json),
        ] {
            let cli = Cli::try_parse_from(argv).expect("parses");
            let asked = match cli.command {
                Command::Verify(args) => args.output.format(),
                Command::Demo(args) => args.output,
                Command::Lint(args) => args.output,
                Command::Stale(args) => args.output,
                _ => unreachable!("only these take -o"),
            };
            assert_eq!(asked, format, "{argv:?}");
        }
    }

    /// `-o jsonpath=` and `-o custom-columns=` take their template after `=`, parsed when the
    /// command line is: a broken one is exit 2 naming what is wrong and how to write it.
    #[test]
    fn a_template_is_taken_after_the_format_and_a_broken_one_refused() {
        let parsed = |argv: &[&str]| match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Command::Verify(args)) => Ok(args.output),
            Ok(_) => unreachable!("verify"),
            Err(e) => Err(e),
        };
        let output = parsed(&[
            "liveproof",
            "verify",
            "deploy/x",
            "-o",
            "jsonpath={.verdict}",
        ])
        .expect("jsonpath");
        assert_eq!(output.to_string(), "jsonpath={.verdict}");
        let output = parsed(&[
            "liveproof",
            "verify",
            "deploy/x",
            "--output=custom-columns=NAME:.name,VERDICT:.verdict",
        ])
        .expect("custom-columns");
        assert_eq!(output.format(), Format::CustomColumns);
        assert_eq!(
            parsed(&["liveproof", "verify", "deploy/x", "-o", "wide"]).expect("wide"),
            Output::from(Format::Wide)
        );
        for (value, said) in [
            ("jsonpath={.targets[*].name", "not closed by `}`"),
            ("jsonpath", "needs its template"),
            ("custom-columns=NAME", "<header>:<json-path-expr>"),
        ] {
            let err = parsed(&["liveproof", "verify", "deploy/x", "-o", value]).expect_err(value);
            assert_eq!(err.exit_code(), 2, "{value}");
            let problem = clap_problem(&err);
            assert!(problem.message.contains(said), "{value}: {problem:?}");
            assert!(
                problem
                    .hint
                    .as_deref()
                    .is_some_and(|h| h.starts_with("e.g. -o ")),
                "{value}: {problem:?}"
            );
        }
        // A file is written in a format that takes no template.
        let err = Cli::try_parse_from([
            "liveproof",
            "verify",
            "deploy/x",
            "--report",
            "r",
            "--report-format",
            "jsonpath",
        ])
        .expect_err("no template for a file");
        assert_eq!(err.exit_code(), 2);
    }

    /// clap hides a value's aliases: help names them, so `-o md` is documented where `-o` is.
    #[test]
    fn help_names_the_format_aliases() {
        let mut cli = <Cli as clap::CommandFactory>::command();
        let verify = cli.find_subcommand_mut("verify").expect("verify");
        let help = verify.render_long_help().to_string();
        let markdown = help
            .lines()
            .find(|l| l.trim_start().starts_with("- markdown:"))
            .unwrap_or_else(|| panic!("no markdown value in:\n{help}"));
        assert!(markdown.ends_with("(also: md)"), "{markdown}");
    }

    #[test]
    fn an_error_document_is_offered_only_in_a_format_a_program_reads() {
        assert_eq!(error_document("json"), Some(Format::Json));
        assert_eq!(error_document("junit"), Some(Format::Junit));
        assert_eq!(error_document("yaml"), Some(Format::Yaml));
        assert_eq!(error_document("text"), None);
        assert_eq!(error_document("name"), None);
        assert_eq!(error_document("sarif"), None);
    }
}
