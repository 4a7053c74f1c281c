//! compare's page (`compare --html`, bench's report.html) read back with a
//! strict XML reader: what a test asserts on.
#![allow(dead_code)]

use std::path::Path;

/// The fill of base's, head's and the change's points, and their radius
/// (src/output/charts.rs).
pub const BASE_FILL: &str = "#1F77B4";
pub const HEAD_FILL: &str = "#D95F02";
pub const CHANGE_FILL: &str = "#444444";
pub const POINT_RADIUS: &str = "4";

/// A plot of the page: its points by fill, and its texts.
#[derive(Debug)]
pub struct Plot {
    pub base_points: usize,
    pub head_points: usize,
    pub change_points: usize,
    pub texts: Vec<String>,
}

/// A function of a benchmark as the page shows it.
#[derive(Debug)]
pub struct PageFunction {
    /// The heading: name, location, verdict.
    pub heading: String,
    /// Its notes (how V8 ran it).
    pub notes: Vec<String>,
    pub plot: Option<Plot>,
}

/// A benchmark's section.
#[derive(Debug)]
pub struct PageBenchmark {
    /// Its name as the heading shows it.
    pub name: String,
    /// The verdict word of its heading.
    pub verdict: String,
    /// Its plots (`figure.benchmark-plot`): one.
    pub plots: Vec<Plot>,
    pub functions: Vec<PageFunction>,
    /// Its flame graph's `img src`, if any.
    pub flame_graph: Option<String>,
}

/// The page.
#[derive(Debug)]
pub struct Page {
    pub title: String,
    /// The table of benchmarks: (name, base, head, change, verdict).
    pub rows: Vec<[String; 5]>,
    pub benchmarks: Vec<PageBenchmark>,
    /// Every `href` and `src` of the page and its SVGs.
    pub links: Vec<String>,
    /// Elements that would run or fetch something: `script`, `iframe`,
    /// `object`, `link`, attributes `on…`.
    pub active: Vec<String>,
}

fn text_of(node: roxmltree::Node) -> String {
    node.descendants().filter(|node| node.is_text()).map(|node| node.text().unwrap_or_default()).collect()
}

fn has_class(node: &roxmltree::Node, class: &str) -> bool {
    node.attribute("class").is_some_and(|classes| classes.split(' ').any(|name| name == class))
}

fn plot_of(figure: roxmltree::Node) -> Plot {
    let svg = figure.children().find(|node| node.has_tag_name("svg")).expect("a figure holds an SVG");
    let points = |fill: &str| {
        svg.descendants()
            .filter(|node| node.has_tag_name("circle"))
            .filter(|node| node.attribute("fill") == Some(fill) && node.attribute("r") == Some(POINT_RADIUS))
            .count()
    };
    Plot {
        base_points: points(BASE_FILL),
        head_points: points(HEAD_FILL),
        change_points: points(CHANGE_FILL),
        texts: svg
            .descendants()
            .filter(|node| node.has_tag_name("text"))
            .map(|node| text_of(node).trim().to_string())
            .collect(),
    }
}

/// Reads the page at `path`, strictly: it must be well-formed XML.
pub fn read_page(path: &Path) -> Page {
    let source = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let document = roxmltree::Document::parse_with_options(&source, options)
        .unwrap_or_else(|error| panic!("{}: not well-formed: {error}", path.display()));
    let root = document.root_element();
    assert_eq!(root.tag_name().name(), "html");
    let title = text_of(root.descendants().find(|node| node.has_tag_name("title")).unwrap());
    let rows = root
        .descendants()
        .filter(|node| node.has_tag_name("table") && has_class(node, "verdicts"))
        .flat_map(|table| table.descendants().filter(|node| node.has_tag_name("tr")).skip(1))
        .map(|row| {
            let cells: Vec<String> =
                row.children().filter(|node| node.has_tag_name("td")).map(|cell| text_of(cell)).collect();
            let verdict = row
                .descendants()
                .find(|node| has_class(node, "verdict"))
                .map(text_of)
                .unwrap_or_else(|| cells[4].clone());
            [cells[0].clone(), cells[1].clone(), cells[2].clone(), cells[3].clone(), verdict]
        })
        .collect();
    let benchmarks = root
        .descendants()
        .filter(|node| node.has_tag_name("section") && has_class(node, "benchmark"))
        .map(|section| {
            let heading = section.children().find(|node| node.has_tag_name("h2")).unwrap();
            let verdict = heading.children().find(|node| has_class(node, "verdict")).map(text_of).unwrap();
            let name = heading
                .children()
                .filter(|node| !has_class(node, "verdict"))
                .map(text_of)
                .collect::<String>()
                .trim_end()
                .to_string();
            let plots = section
                .children()
                .filter(|node| node.has_tag_name("figure") && has_class(node, "benchmark-plot"))
                .map(plot_of)
                .collect();
            let functions = section
                .children()
                .filter(|node| node.has_tag_name("div") && has_class(node, "function"))
                .map(|function| PageFunction {
                    heading: text_of(function.children().find(|node| node.has_tag_name("h4")).unwrap()),
                    notes: function.descendants().filter(|node| node.has_tag_name("li")).map(text_of).collect(),
                    plot: function.children().find(|node| node.has_tag_name("figure")).map(plot_of),
                })
                .collect();
            let flame_graph = section
                .descendants()
                .find(|node| node.has_tag_name("img"))
                .and_then(|image| image.attribute("src"))
                .map(str::to_string);
            PageBenchmark { name, verdict, plots, functions, flame_graph }
        })
        .collect();
    let mut links = Vec::new();
    let mut active = Vec::new();
    for node in root.descendants().filter(|node| node.is_element()) {
        for attribute in node.attributes() {
            if matches!(attribute.name(), "href" | "src" | "data" | "action" | "srcset" | "poster") {
                links.push(attribute.value().to_string());
            }
            if attribute.name().starts_with("on") {
                active.push(format!("{}@{}", attribute.name(), node.tag_name().name()));
            }
        }
        if matches!(node.tag_name().name(), "script" | "iframe" | "object" | "embed" | "link" | "base") {
            active.push(node.tag_name().name().to_string());
        }
    }
    Page { title, rows, benchmarks, links, active }
}

/// Asserts that nothing on the page fetches from the network or runs, and
/// that every relative link names a file that is there (relative to the
/// page's directory).
pub fn assert_offline(page: &Page, path: &Path) {
    assert_eq!(page.active, Vec::<String>::new(), "{}", path.display());
    for link in &page.links {
        let lower = link.to_ascii_lowercase();
        assert!(
            !lower.starts_with("http:") && !lower.starts_with("https:") && !lower.starts_with("//"),
            "{}: {link}",
            path.display()
        );
        if let Some(anchor) = link.strip_prefix('#') {
            assert!(anchor.starts_with("benchmark-"), "{link}");
            continue;
        }
        let decoded = percent_decode(link);
        let target = path.parent().unwrap().join(&decoded);
        assert!(target.is_file(), "{}: {link} → {} is not a file", path.display(), target.display());
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() + 1 {
            decoded.push(u8::from_str_radix(&text[index + 1..index + 3], 16).unwrap());
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(decoded).unwrap()
}
