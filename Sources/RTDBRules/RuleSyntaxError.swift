/// A mistake in a rule expression, at an offset (in Unicode scalars) into its text.
struct RuleSyntaxError: Error {
    let message: String
    let offset: Int

    init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }
}
