//! Our scorers give the reference's values and answers on the same cases (the reference's
//! scorers run in its own Python, side by side).

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use actuator_eval::scorers::{
    IncludesOptions, Location, MatchOptions, PatternOptions, exact, f1, includes, match_, pattern,
};
use actuator_eval::{Scorer, Target};
use actuator_model::ModelOutput;
use actuator_multi::TaskState;
use serde_json::{Value, json};

fn cases() -> Vec<Value> {
    let m = |completion: &str, target: &[&str], args: Value| json!({"scorer": "match", "args": args, "completion": completion, "target": target});
    let mut cases = vec![
        m("The answer is 7.", &["7"], json!({})),
        m("7 is the answer", &["7"], json!({"location": "begin"})),
        m("It is 25", &["5"], json!({"numeric": true})),
        m("It costs $1,000.", &["1000"], json!({"numeric": true})),
        m(
            "about 3.14159 I think",
            &["3.14159"],
            json!({"location": "any", "numeric": true}),
        ),
        m("ANSWER: Paris", &["paris"], json!({})),
        m("ANSWER: Paris", &["paris"], json!({"ignore_case": false})),
        m(
            "(42)",
            &["42"],
            json!({"location": "exact", "numeric": true}),
        ),
        m("  Paris!  ", &["Paris"], json!({"location": "exact"})),
        m("London", &["Paris", "London"], json!({})),
        m("", &["7"], json!({})),
        m(
            "1.2345678e6 units",
            &["1234567.8"],
            json!({"location": "begin", "numeric": true}),
        ),
    ];
    for (completion, target, ignore_case) in [
        ("The capital is Paris.", "paris", true),
        ("The capital is Paris.", "paris", false),
        ("nothing here", "paris", true),
    ] {
        cases.push(json!({"scorer": "includes", "args": {"ignore_case": ignore_case}, "completion": completion, "target": [target]}));
    }
    for (completion, expr, target, match_all) in [
        ("ANSWER: B", r"ANSWER: (\w)", vec!["b"], false),
        ("ANSWER: X", r"ANSWER: (\w)", vec!["b"], false),
        ("no format", r"ANSWER: (\w)", vec!["b"], false),
        ("1 and 2", r"(\d) and (\d)", vec!["1", "2"], true),
        ("1 and 3", r"(\d) and (\d)", vec!["1", "2"], true),
        ("the word cat", r"cat", vec!["cat"], false),
    ] {
        cases.push(json!({"scorer": "pattern", "args": {"pattern": expr, "match_all": match_all}, "completion": completion, "target": target}));
    }
    for (completion, target) in [
        ("The Cat sat on the mat.", vec!["cat sat on mat"]),
        ("3.0", vec!["3"]),
        ("a", vec!["the"]),
        ("Paris, France", vec!["paris"]),
    ] {
        cases.push(
            json!({"scorer": "exact", "args": {}, "completion": completion, "target": target}),
        );
        cases.push(json!({"scorer": "f1", "args": {}, "completion": completion, "target": target}));
    }
    cases.push(json!({"scorer": "f1", "args": {}, "completion": "the cat sat sat", "target": ["a cat sat down"]}));
    cases
}

fn ours(case: &Value) -> Box<dyn Scorer> {
    let args = &case["args"];
    let flag = |k: &str, default: bool| args.get(k).and_then(Value::as_bool).unwrap_or(default);
    match case["scorer"].as_str().unwrap() {
        "match" => {
            let location = match args
                .get("location")
                .and_then(Value::as_str)
                .unwrap_or("end")
            {
                "begin" => Location::Begin,
                "any" => Location::Any,
                "exact" => Location::Exact,
                _ => Location::End,
            };
            Box::new(match_(
                MatchOptions::default()
                    .location(location)
                    .ignore_case(flag("ignore_case", true))
                    .numeric(flag("numeric", false)),
            ))
        }
        "includes" => Box::new(includes(
            IncludesOptions::default().ignore_case(flag("ignore_case", true)),
        )),
        "pattern" => Box::new(
            pattern(
                args["pattern"].as_str().unwrap(),
                PatternOptions::default()
                    .ignore_case(flag("ignore_case", true))
                    .match_all(flag("match_all", false)),
            )
            .unwrap(),
        ),
        "exact" => Box::new(exact()),
        "f1" => Box::new(f1(Vec::new())),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn our_scorers_agree_with_the_reference() {
    let Some(python) = common::inspect_python() else {
        return;
    };
    let cases = cases();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inspect/reference_scorers.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&cases).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reference.len(), cases.len());
    let mut differences = Vec::new();
    for (case, theirs) in cases.iter().zip(&reference) {
        let state = TaskState {
            output: ModelOutput::from_content(
                "mockllm/model",
                case["completion"].as_str().unwrap(),
            ),
            ..TaskState::default()
        };
        let target = Target::Many(
            case["target"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect(),
        );
        let score = ours(case).score(&state, &target).await.unwrap();
        let value = serde_json::to_value(&score.value).unwrap();
        let same_value = match (&value, &theirs["value"]) {
            (Value::Number(a), Value::Number(b)) => {
                (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-9
            }
            (a, b) => a == b,
        };
        let answer = score.answer.map_or(Value::Null, Value::String);
        if !same_value || answer != theirs["answer"] {
            differences.push(format!(
                "{case}: ours {value} {answer}, reference {} {}",
                theirs["value"], theirs["answer"]
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
