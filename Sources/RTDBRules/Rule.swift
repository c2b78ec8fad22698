/// One rule of a rules file as written: where it applies (`/users/$uid`), its kind, its
/// text, and its parsed expression, for traces and coverage to name and show.
struct Rule: Sendable {
    /// The location it is written at, wildcards by name: `/`, `/users/$uid`.
    let location: String
    let kind: RuleKind
    /// The expression's text (`true` or `false` for a JSON boolean).
    let text: String
    let term: RuleTerm

    /// How a trace names it: `/users/$uid/.write`.
    var name: String { (location == "/" ? "" : location) + "/" + kind.rawValue }
}
