//! `history report --format html`: a self-contained page.

use super::HistoryEntry;
use super::report::HistoryReport;

/// The page.
pub fn page(_history: &[HistoryEntry], _report: &HistoryReport) -> String {
    unimplemented!("the html page")
}
