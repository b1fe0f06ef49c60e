//! docs/README.md maps every page of docs/: a page added without a line there (or a line left
//! for a page that is gone) fails here, naming it.

use std::path::Path;

#[test]
fn the_docs_index_names_every_page_and_no_other() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let index = std::fs::read_to_string(docs.join("README.md")).unwrap();
    let mut pages: Vec<String> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "README.md")
        .collect();
    pages.sort();
    let unlisted: Vec<&String> = (pages.iter())
        .filter(|p| !index.contains(&format!("]({p})")))
        .collect();
    assert!(unlisted.is_empty(), "docs/README.md lacks {unlisted:?}");
    let linked: Vec<&str> = (index.split("](").skip(1))
        .filter_map(|rest| rest.split(')').next())
        .filter(|l| l.ends_with(".md"))
        .collect();
    let gone: Vec<&&str> = (linked.iter())
        .filter(|l| !pages.iter().any(|p| p == **l))
        .collect();
    assert!(
        gone.is_empty(),
        "docs/README.md links pages that do not exist: {gone:?}"
    );
}
