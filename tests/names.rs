//! One name per idea: no two public types of the library share a name
//! (issue 11: `Function`, `FrameKind`, `Sample` ... each existed twice, and a
//! reader could not tell which one a signature meant).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `.rs` files under `directory`, but the binary's.
fn library_sources(directory: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "bin") {
                library_sources(&path, files);
            }
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// The name a line declares a public type, trait or alias under, if it does.
fn public_type_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("pub ")?;
    let rest = ["struct ", "enum ", "trait ", "type ", "union "].iter().find_map(|kind| rest.strip_prefix(kind))?;
    let end = rest.find(|character: char| !(character.is_alphanumeric() || character == '_')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

#[test]
fn no_two_public_types_share_a_name() {
    let mut files = Vec::new();
    library_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    files.sort();
    let mut declared: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (index, line) in text.lines().enumerate() {
            if let Some(name) = public_type_name(line) {
                let place =
                    format!("{}:{}", file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().display(), index + 1);
                declared.entry(name.to_string()).or_default().push(place);
            }
        }
    }
    assert!(declared.len() > 100, "only {} public types found: the scan is broken", declared.len());
    let shared: Vec<(&String, &Vec<String>)> = declared.iter().filter(|(_, places)| places.len() > 1).collect();
    assert!(shared.is_empty(), "public types sharing a name: {shared:?}");
}
