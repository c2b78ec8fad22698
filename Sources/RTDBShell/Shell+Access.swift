import Foundation
import RTDBClient
import RTDBData
import RTDBRules

/// `auth`, `logout` and `rules`: who the server's rules see, and the rules themselves.
extension Shell {
    func authenticate(_ source: AuthSource) async throws {
        guard let server = options.server else {
            throw ShellError("an embedded database has no security rules, so no credential: auth is for rtdb serve and hosted databases (--url)")
        }
        let token: String
        let origin: String
        switch source {
        case let .uid(uid, claims):
            guard server.isLocal else {
                throw ShellError("auth --uid makes an unsigned token, which only a local server takes; for a hosted database use auth TOKEN-FILE")
            }
            token = Identity.unsignedToken(uid: uid, claims: claims, now: Date().timeIntervalSince1970)
            origin = "unsigned, from auth --uid"
        case .file(let file):
            token = try readToken(file)
            origin = file == "-" ? "from standard input" : "from \(file)"
        }
        // As the official clients choose: a JWT with an issue time is an ID token (`auth`);
        // anything else (an OAuth2 token, the emulator's owner) goes with `gauth`.
        let claims = Identity.claims(ofToken: token)
        let google = claims?["iat"] == nil
        try await sendCredential(token, google: google)
        server.userChoseCredential()
        server.useCredential(token, google: google)
        HistoryFilter.hold(token)
        options.credential = Shell.describe(token: token, claims: claims, origin: origin)
        chosenCredential = .token(token, google: google, description: options.credential)
        // Its kind (never the token) goes with the queued writes: see reportRestored.
        await repo.setCacheSetting("credential", options.credential)
        output.writeError("authenticated as \(options.credential)\n")
    }

    /// Signs the connection in with `token`, waiting for the server's answer at most the
    /// read timeout (past it, the token is sent again on the next connection).
    func sendCredential(_ token: String, google: Bool) async throws {
        do {
            try await withTimeout(options.readTimeout) { try await self.repo.authenticate(token: token, google: google) }
        } catch let error as DatabaseError {
            throw ShellError("the server refused the credential: \(error)")
        } catch is TimeoutError {
            throw ShellError("the server did not answer within \(DurationWord.describe(options.readTimeout)); the credential is sent again on the next connection")
        }
    }

    func logout() async throws {
        guard let server = options.server else { throw ShellError("an embedded database has no credential to forget") }
        server.userChoseCredential()
        await repo.unauthenticate()
        server.useCredential(nil, google: false)
        options.credential = "none"
        chosenCredential = ChosenCredential.none
        await repo.setCacheSetting("credential", options.credential)
        output.writeError("logged out: the server sees no credential\n")
    }

    func rules(_ file: String?) async throws {
        guard let server = options.server else {
            throw ShellError("an embedded database has no security rules: only its owner uses it; rules apply to rtdb serve (--rules) and hosted databases")
        }
        guard let file else {
            let text = try await server.readRules()
            output.write(text.hasSuffix("\n") ? text : text + "\n")
            return
        }
        let text = try UserFile.text(try UserFile.contents(file), of: file)
        // Checked here first, so a mistake names the file's line and column.
        do { _ = try SecurityRules(parsing: text) } catch {
            throw ShellError("\(file):\(error.line):\(error.column): \(error.message); the rules were not changed")
        }
        try await server.writeRules(text)
        output.writeError("the rules of \(options.location()) are replaced\n")
    }

    /// `rules check`: what the rules would say of a request, with every rule evaluated on the
    /// way; writes nothing. Allowed is `.ok`, denied `.failed` (exit status 1 in a script).
    func checkRules(_ check: RulesCheck, json: Bool, renderer: Renderer) async throws -> Outcome {
        guard let checker = options.rulesCheck else { throw ShellError("this database cannot check rules") }
        var rules: String?
        if let file = check.rulesFile {
            let text = try UserFile.text(try UserFile.contents(file), of: file)
            do { _ = try SecurityRules(parsing: text) } catch {
                throw ShellError("\(file):\(error.line):\(error.column): \(error.message)")
            }
            rules = text
        } else if !checker.hasRules {
            throw ShellError("an embedded database has no rules of its own: give the rules to check with --rules FILE")
        }
        let operation: RuleQuestion.Operation
        switch check.operation {
        case .read: operation = .read
        case .write(let value): operation = .write(value)
        case .update(let entries): operation = .update(entries.map { ($0.path, $0.value) })
        }
        let credential = check.uid.map { Identity.unsignedToken(uid: $0, claims: check.claims, now: Date().timeIntervalSince1970) }
        let question = RuleQuestion(path: check.path, operation: operation, credential: credential, rules: rules)
        let answer: RuleAnswer
        do { answer = try await checker.checkRules(question) } catch let error as ShellError { throw error } catch {
            throw ShellError("\(error)")
        }
        if json {
            output.write(answer.json.serialized() + "\n")
        } else {
            output.write(Self.describe(answer, of: question.operation.name, at: check.path, as: check.uid, renderer: renderer))
        }
        return answer.allowed ? .ok : .failed
    }

    /// `denied: write at /a as uid ada: no .write rule allows this write`, then the rules
    /// evaluated, one a line.
    nonisolated static func describe(_ answer: RuleAnswer, of operation: String, at path: Path, as uid: String?, renderer: Renderer) -> String {
        let who = uid.map { "uid " + $0 } ?? "no one (no credential)"
        var text = renderer.verdict(answer.allowed) + ": \(operation) at \(path) as \(who)" + (answer.reason.map { ": " + $0 } ?? "") + "\n"
        if answer.steps.isEmpty {
            text += answer.allowed ? "  no rule applies: anyone may read /.info\n" : "  no rule of this kind is written at \(path) or above it\n"
        }
        for step in answer.steps { text += "  " + step.line + "\n" }
        return text
    }

    /// `rules coverage`: what the requests made of each rule and each part of it since the
    /// rules were set; the server's report as it is with --json.
    func showRuleCoverage(json: Bool) async throws {
        guard let server = options.server else {
            throw ShellError("an embedded database has no rules, so no coverage: rules apply to rtdb serve (--rules) and hosted databases")
        }
        let report = try await server.ruleCoverage()
        if json {
            output.write(report.serialized() + "\n")
        } else {
            output.write(Self.describeCoverage(report))
        }
    }

    /// The coverage report for a person: a summary, then each rule (in the order of the file)
    /// with its parts indented by depth and what each gave; literals, worth what they say,
    /// are left out, and so are the parts of a rule never evaluated.
    nonisolated static func describeCoverage(_ report: JSONValue) -> String {
        guard case .array(let rules)? = report["rules"] else { return "the report holds no rules\n" }
        let parts = rules.flatMap { rule -> [JSONValue] in if case .array(let parts)? = rule["parts"] { return parts } else { return [] } }
        var text = "\(rules.filter { count($0["evaluations"]) > 0 }.count) of \(rules.count) rules evaluated, "
        text += "\(parts.filter { count($0["evaluations"]) > 0 }.count) of \(parts.count) parts, since the rules were set\n"
        for rule in rules {
            let evaluations = count(rule["evaluations"])
            text += "\(rule["rule"]?.string ?? "?") (line \(count(rule["line"])), column \(count(rule["column"]))): "
            text += evaluations == 0 ? "never evaluated\n" : "evaluated \(evaluations) time\(evaluations == 1 ? "" : "s")\n"
            guard evaluations > 0, case .array(let parts)? = rule["parts"] else { continue }
            for part in parts where part["constant"] != .bool(true) {
                let depth = min(max(count(part["depth"]), 0), 32)
                var shown = part["text"]?.string ?? ""
                if shown.count > 60 { shown = String(shown.prefix(59)) + "…" }
                text += String(repeating: "  ", count: depth + 1) + shown + " → " + Self.partSummary(part) + "\n"
            }
        }
        return text
    }

    /// A count in the server's report; 0 for anything that is not a whole number.
    private nonisolated static func count(_ value: JSONValue?) -> Int { value?.int ?? 0 }

    /// What one part of the report gave, as the server's page says it.
    private nonisolated static func partSummary(_ part: JSONValue) -> String {
        let values = Dictionary((part["values"]?.members ?? []).map { ($0.0, count($0.1)) }, uniquingKeysWith: +)
        return RuleCoverageReport.summary(RuleCoverage.Tally(evaluations: count(part["evaluations"]), values: values, otherValues: count(part["otherValues"]),
                                                             errors: count(part["errors"]), lastError: part["lastError"]?.string))
    }

    /// A token from a file (or standard input, when commands do not come from it), without
    /// surrounding white space.
    private func readToken(_ file: String) throws -> String {
        let data: Data
        if file == "-" {
            guard options.standardInputIsFree else {
                throw ShellError("auth - reads the token from standard input, which carries this session's commands; give a file name, or run rtdb -c 'auth -' < FILE")
            }
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            data = try UserFile.contents(file)
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.count <= 64 << 10, !token.contains(where: \.isWhitespace) else {
            throw ShellError("\(file) does not hold a token (one word, at most 64 KB)")
        }
        return token
    }

    /// What `status` says about a credential: its kind and user, never the token.
    static func describe(token: String, claims: JSONValue?, origin: String) -> String {
        if token == Identity.ownerCredential { return "owner (\(origin))" }
        guard let claims else { return "access token or database secret (\(origin))" }
        let uid = claims["sub"]?.string ?? claims["user_id"]?.string ?? claims["d"]?["uid"]?.string
        return "ID token" + (uid.map { " for uid \($0)" } ?? "") + " (\(origin))"
    }
}
