extension Int {
    /// `self + other`, or the largest Int when that overflows: for counts that only grow
    /// (operations a monitor lost), where a count past any real one must not trap.
    public func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
