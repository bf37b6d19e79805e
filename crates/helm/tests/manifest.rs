//! Splitting an installed release's manifest into the objects it renders.

use liveproof_helm::{manifest_objects, read_manifest};

const MANIFEST: &str = "---
# Source: inventory/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: inventory
spec:
  ports:
    - port: 80
---
# Source: inventory/templates/empty.yaml
---
# Source: inventory/templates/notes-only.yaml
# nothing rendered: the template is switched off
---
# Source: inventory/templates/values-snippet.yaml
replicas: 3
image:
  tag: \"1.8.0\"
---
# Source: inventory/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inventory
  namespace: apps
spec:
  template:
    spec:
      containers:
        - name: app
          image: registry.acme.example/inventory:1.8.0
          # a line of dashes inside a value is not a separator:
          args: [\"---\"]
---
# Source: inventory/templates/broken.yaml
kind: [unclosed
---
# Source: inventory/templates/list.yaml
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: inventory-flags
  - apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: inventory
";

#[test]
fn objects_come_out_in_order_with_their_source() {
    let objects = manifest_objects(MANIFEST);
    let summary: Vec<_> = objects
        .iter()
        .map(|o| {
            (
                o.api_version.as_str(),
                o.kind.as_str(),
                o.name.as_str(),
                o.namespace.as_deref(),
                o.source.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "v1",
                "Service",
                "inventory",
                None,
                Some("inventory/templates/service.yaml")
            ),
            (
                "apps/v1",
                "Deployment",
                "inventory",
                Some("apps"),
                Some("inventory/templates/deployment.yaml")
            ),
            (
                "v1",
                "ConfigMap",
                "inventory-flags",
                None,
                Some("inventory/templates/list.yaml")
            ),
            (
                "v1",
                "ServiceAccount",
                "inventory",
                None,
                Some("inventory/templates/list.yaml")
            ),
        ]
    );
}

#[test]
fn text_is_the_document_as_rendered() {
    let objects = manifest_objects(MANIFEST);
    let deployment = &objects[1];
    assert!(deployment
        .text
        .starts_with("# Source: inventory/templates/deployment.yaml\napiVersion: apps/v1\n"));
    assert!(deployment.text.ends_with("args: [\"---\"]"));
    assert!(deployment
        .text
        .contains("registry.acme.example/inventory:1.8.0"));
    assert!(objects[2].text.contains("name: inventory-flags"));
    assert!(!objects[2].text.contains("ServiceAccount"));
}

#[test]
fn a_manifest_without_separators_or_comments_still_parses() {
    let objects = manifest_objects("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].source, None);
    assert_eq!(objects[0].name, "a");
}

#[test]
fn crlf_separators_split_too() {
    let objects = manifest_objects(
        "---\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n---\r\nkind: Secret\r\nmetadata:\r\n  name: b\r\n",
    );
    let names: Vec<_> = objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn hostile_manifests_never_panic() {
    for manifest in [
        "",
        "---",
        "---\n---\n---\n",
        "kind:",
        "kind: 42\nmetadata: []",
        "kind: List\nitems: 7",
        "kind: List\nitems: [1, \"a\", {kind: Pod}]",
        "\u{feff}kind: ConfigMap",
        "a: &a [*a]",
        "{{ .Values.unrendered }}",
        "- just\n- a\n- list",
    ] {
        let _ = manifest_objects(manifest);
    }
    assert_eq!(manifest_objects("kind: 42\nmetadata: []").len(), 0);
    // A List item with a kind but no name is still an object; the name is empty.
    let items = manifest_objects("kind: List\nitems: [1, \"a\", {kind: Pod}]");
    assert_eq!(items.len(), 1);
    assert_eq!(
        (items[0].kind.as_str(), items[0].name.as_str()),
        ("Pod", "")
    );
}

#[test]
fn debug_does_not_print_the_rendered_text() {
    let objects = manifest_objects(
        "kind: Secret\nmetadata:\n  name: db\ndata:\n  password: aHVudGVyMi1zM2NyM3Q=\n",
    );
    let debug = format!("{objects:?}");
    assert!(debug.contains("Secret"));
    assert!(!debug.contains("aHVudGVyMi1zM2NyM3Q="), "{debug}");
}

#[test]
fn unreadable_documents_are_reported_not_dropped() {
    let deep = format!(
        "kind: ConfigMap\nx: {}{}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    let manifest = format!(
        "---\n# Source: c/templates/a.yaml\nkind: ConfigMap\nmetadata: {{name: a}}\n--- \n# Source: c/templates/dup.yaml\nkind: Secret\nkind: Secret\n---  # deep\n# Source: c/templates/deep.yaml\n{deep}---\nkind: Deployment\napiVersion: apps/v1\nmetadata: {{name: web}}\n"
    );
    let read = read_manifest(&manifest);
    let names: Vec<_> = read.objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["a", "web"]);
    let unreadable: Vec<String> = read.unreadable.iter().map(ToString::to_string).collect();
    assert_eq!(unreadable.len(), 2, "{unreadable:?}");
    assert!(
        unreadable[0].starts_with(
            "document 2 (c/templates/dup.yaml): not valid YAML: a mapping has a duplicate key"
        ),
        "{unreadable:?}"
    );
    assert!(
        unreadable[1]
            .starts_with("document 3 (c/templates/deep.yaml): nested deeper than 128 levels"),
        "{unreadable:?}"
    );
}

#[test]
fn separators_with_trailing_space_or_comment_split_too() {
    let objects = manifest_objects(
        "kind: ConfigMap\nmetadata: {name: a}\n--- \nkind: ConfigMap\nmetadata: {name: b}\n---   # c\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    let names: Vec<_> = objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
}
