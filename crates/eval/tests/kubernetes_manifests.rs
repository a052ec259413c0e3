//! The Kubernetes manifests of `deploy/kubernetes/`, checked with no cluster: each document
//! against the API's own schema for its kind (Kubernetes 1.33, strict: an unknown field is an
//! error, as `kubectl apply --validate=strict` makes it), then against each other and the
//! Dockerfile, since a cluster would accept a shard count that skips samples or a merge that
//! reads an empty directory. Schemas: `specs/kubernetes/`, described in `specs/SOURCES.md`.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};

use jsonschema::{Registry, Validator};
use serde::Deserialize;
use serde_json::{Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn deploy_dir() -> PathBuf {
    repo().join("deploy/kubernetes")
}

fn schema_dir() -> PathBuf {
    repo().join("specs/kubernetes/v1.33-strict")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (see specs/SOURCES.md)", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The validator for one kind, or a panic naming the missing schema: a manifest of a kind
/// with no schema here must not pass unchecked.
fn validator(api_version: &str, kind: &str) -> Validator {
    // kubernetes-validate's file names: `<kind>-<group's first label>-<version>.json`, with
    // no group for the core API (`v1`).
    let group_version = match api_version.split_once('/') {
        Some((group, version)) => format!("-{}-{version}", group.split('.').next().unwrap()),
        None => format!("-{api_version}"),
    };
    let file = schema_dir().join(format!("{}{group_version}.json", kind.to_lowercase()));
    let schema = read_json(&file);
    // The kind's schema points into `_definitions.json` by the `$id` that file declares; it is
    // registered under that id, and `offline` fails the build on any other reference instead
    // of fetching it.
    let definitions = read_json(&schema_dir().join("_definitions.json"));
    let id = definitions["$id"].as_str().unwrap().to_owned();
    let registry = Registry::new()
        .add(id, definitions)
        .unwrap()
        .prepare()
        .unwrap();
    jsonschema::options()
        .offline()
        .with_registry(&registry)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{} does not compile: {e}", file.display()))
}

/// Every schema error for `doc`, as `path: message` lines (empty when it is valid).
fn errors(doc: &Value) -> Vec<String> {
    let validator = validator(
        doc["apiVersion"].as_str().unwrap(),
        doc["kind"].as_str().unwrap(),
    );
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Every YAML document of every `deploy/kubernetes/*.yaml`, with its file name.
fn manifests() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(deploy_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for document in serde_norway::Deserializer::from_str(&text) {
            let doc =
                Value::deserialize(document).unwrap_or_else(|e| panic!("{name} is not YAML: {e}"));
            if !doc.is_null() {
                docs.push((name.clone(), doc));
            }
        }
    }
    docs
}

fn named(kind: &str, name: &str) -> Value {
    manifests()
        .into_iter()
        .map(|(_, doc)| doc)
        .find(|doc| doc["kind"] == kind && doc["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in deploy/kubernetes"))
}

/// The job's one container.
fn container(job: &Value) -> &Value {
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(containers.len(), 1, "one container per pod");
    &containers[0]
}

fn args(job: &Value) -> Vec<&str> {
    container(job)["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect()
}

/// The argument after `flag`.
fn flag<'a>(args: &[&'a str], flag: &str) -> &'a str {
    let at = args.iter().position(|arg| *arg == flag);
    args[at.unwrap_or_else(|| panic!("no {flag} in {args:?}")) + 1]
}

#[test]
fn every_manifest_is_valid_against_the_kubernetes_schema() {
    let docs = manifests();
    let found: Vec<(&str, &str)> = docs
        .iter()
        .map(|(file, doc)| (file.as_str(), doc["kind"].as_str().unwrap()))
        .collect();
    let expected = [
        ("merge-job.yaml", "Job"),
        ("pvc.yaml", "PersistentVolumeClaim"),
        ("shards-job.yaml", "Job"),
    ];
    assert_eq!(found, expected);
    for (file, doc) in &docs {
        let errors = errors(doc);
        assert!(errors.is_empty(), "{file}:\n{}", errors.join("\n"));
        let labels = [
            &doc["metadata"]["labels"],
            &doc["spec"]["template"]["metadata"]["labels"],
        ];
        for labels in labels.into_iter().filter(|l| !l.is_null()) {
            assert_eq!(labels["app.kubernetes.io/name"], "actuator-eval", "{file}");
        }
    }
}

#[test]
fn the_strict_schema_rejects_a_misspelled_field_and_a_wrong_type() {
    let job = named("Job", "actuator-shards");
    assert!(errors(&job).is_empty());

    let mut misspelled = job.clone();
    let spec = misspelled["spec"].as_object_mut().unwrap();
    let mode = spec.remove("completionMode").unwrap();
    spec.insert("completionsMode".into(), mode);
    let found = errors(&misspelled);
    assert!(
        found.iter().any(|e| e.contains("'completionsMode'")),
        "completionsMode: {found:?}"
    );

    // Deep in the pod template too, where a typo would silently drop the volume.
    let mut deep = job.clone();
    let mounts = deep["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("volumeMounts")
        .unwrap();
    deep["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = mounts;
    let found = errors(&deep);
    assert!(
        found.iter().any(|e| e.contains("'volumeMount'")),
        "volumeMount: {found:?}"
    );

    let mut wrong_type = job;
    wrong_type["spec"]["completions"] = json!("4");
    let found = errors(&wrong_type);
    assert!(
        found.iter().any(|e| e.starts_with("/spec/completions")),
        "{found:?}"
    );
}

#[test]
fn the_shards_job_is_indexed_with_as_many_completions_as_shards() {
    let job = named("Job", "actuator-shards");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    // Kubernetes only allows backoffLimitPerIndex with restartPolicy Never.
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    let completions = spec["completions"].as_u64().unwrap();
    assert!(spec["parallelism"].as_u64().unwrap() <= completions);

    let args = args(&job);
    assert_eq!(args[..2], ["eval", "arithmetic"]);
    let shard = flag(&args, "--shard");
    let count = shard
        .strip_prefix("$(JOB_COMPLETION_INDEX)/")
        .unwrap_or_else(|| panic!("--shard {shard} does not take the completion index"));
    assert_eq!(
        count.parse::<u64>().unwrap(),
        completions,
        "--shard {shard}"
    );
    // A shard Kubernetes runs again resumes its own log instead of writing a second one.
    if spec["backoffLimitPerIndex"].as_u64().unwrap_or(0) > 0 {
        assert!(
            args.contains(&"--resume"),
            "retried shards need --resume: {args:?}"
        );
    }
}

#[test]
fn the_merge_job_reads_the_directory_the_shards_write_on_the_same_claim() {
    let shards = named("Job", "actuator-shards");
    let merge = named("Job", "actuator-merge");
    let log_dir = flag(&args(&shards), "--log-dir");
    let merge_args = args(&merge);
    assert_eq!(merge_args[..2], ["merge", log_dir]);
    // Outside the directory: a second merge must not read the first one's output as a shard.
    let out = flag(&merge_args, "--out");
    assert!(
        !Path::new(out).starts_with(log_dir),
        "--out {out} is in {log_dir}"
    );

    let claim = named("PersistentVolumeClaim", "actuator-logs");
    // Pods on several nodes write at once.
    assert_eq!(claim["spec"]["accessModes"], json!(["ReadWriteMany"]));
    for job in [&shards, &merge] {
        let volumes = job["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .unwrap();
        let mounts = container(job)["volumeMounts"].as_array().unwrap();
        assert_eq!((volumes.len(), mounts.len()), (1, 1));
        assert_eq!(
            volumes[0]["persistentVolumeClaim"]["claimName"],
            "actuator-logs"
        );
        assert_eq!(mounts[0]["name"], volumes[0]["name"]);
        let mount = mounts[0]["mountPath"].as_str().unwrap();
        assert!(Path::new(log_dir).starts_with(mount) && Path::new(out).starts_with(mount));
    }
}

#[test]
fn model_credentials_come_from_a_secret_never_inline() {
    let shards = named("Job", "actuator-shards");
    let container = container(&shards);
    assert!(
        container["envFrom"][0]["secretRef"]["name"].is_string()
            || container["env"].as_array().is_some_and(|env| env
                .iter()
                .any(|var| var["valueFrom"]["secretKeyRef"].is_object())),
        "no Secret in {container}"
    );
    for (file, doc) in manifests() {
        let Some(containers) = doc["spec"]["template"]["spec"]["containers"].as_array() else {
            continue;
        };
        for var in containers
            .iter()
            .filter_map(|c| c["env"].as_array())
            .flatten()
        {
            assert!(var.get("value").is_none(), "{file}: inline env {var}");
        }
    }
}

#[test]
fn the_dockerfile_builds_and_installs_the_binary_the_jobs_run() {
    let dockerfile = std::fs::read_to_string(deploy_dir().join("Dockerfile")).unwrap();
    let readme = std::fs::read_to_string(deploy_dir().join("README.md")).unwrap();
    let shards = named("Job", "actuator-shards");
    // One build for both: the merge reads logs the shards wrote. The README builds that tag.
    let image = container(&shards)["image"].as_str().unwrap().to_owned();
    let build = format!("docker build -f deploy/kubernetes/Dockerfile -t {image} .");
    assert!(readme.contains(&build), "the README does not build {image}");
    for job in [shards, named("Job", "actuator-merge")] {
        let container = container(&job);
        assert_eq!(container["image"], image.as_str());
        let program = container["command"][0].as_str().unwrap();
        let example = Path::new(program).file_name().unwrap().to_str().unwrap();
        let features = dockerfile
            .split_once("-p actuator --features ")
            .and_then(|(_, rest)| rest.split_once(&format!(" --example {example} ")))
            .map(|(features, _)| features.split(',').collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("the Dockerfile does not build example {example}"));
        // Every feature the example requires is asked for, or on by default.
        for feature in required_features(example) {
            assert!(
                features.contains(&feature.as_str()) || default_features().contains(&feature),
                "the Dockerfile builds {example} without its feature {feature}"
            );
        }
        assert!(
            dockerfile.contains(&format!("COPY --from=build /{example} {program}\n")),
            "the Dockerfile does not install {program}"
        );
    }
    // The build stage's toolchain is the workspace's rust-version.
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let rust_version = manifest
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = \""))
        .unwrap()
        .trim_end_matches('"');
    assert!(dockerfile.contains(&format!("FROM rust:{rust_version}-bookworm AS build")));
}

/// A line of the facade's manifest as a list of quoted names: `key = ["a", "b"]`.
fn quoted_list(line: &str) -> Vec<String> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn facade_manifest() -> String {
    std::fs::read_to_string(repo().join("crates/actuator/Cargo.toml")).unwrap()
}

/// The facade's default features.
fn default_features() -> Vec<String> {
    let manifest = facade_manifest();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("default = ["))
        .unwrap();
    quoted_list(line)
}

/// The `required-features` of the facade's example `name` (which must be declared).
fn required_features(name: &str) -> Vec<String> {
    let manifest = facade_manifest();
    let mut lines = manifest.lines();
    lines
        .find(|l| *l == format!("name = \"{name}\""))
        .unwrap_or_else(|| panic!("crates/actuator/Cargo.toml declares no example {name}"));
    let line = lines.find(|l| l.starts_with("required-features")).unwrap();
    quoted_list(line)
}
