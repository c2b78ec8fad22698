import RTDBClient
import RTDBData

/// Builds query parameters from flags in the order given, refusing the combinations the
/// official SDKs refuse, with their words.
enum QueryFlags {
    static func params(from args: Arguments) throws -> QueryParams {
        var params = QueryParams()
        var orderBy: String?
        var limitSet = false
        var startSet = false, endSet = false
        let queryFlags = Set(CommandSpec.queryFlags.map(\.name))
        for (flag, flagToken, token, key) in args.ordered where queryFlags.contains(flag) {
            switch flag {
            case "--orderByChild", "--orderByKey", "--orderByValue", "--orderByPriority":
                let method = "orderBy" + flag.dropFirst("--orderBy".count)
                if orderBy != nil { throw ShellError("Query.\(method): You can't combine multiple orderBy calls.", column: flagToken.column) }
                orderBy = method
                switch flag {
                case "--orderByKey": params = params.ordered(by: .key)
                case "--orderByValue": params = params.ordered(by: .value)
                case "--orderByPriority": params = params.ordered(by: .priority)
                default:
                    let child = token!.unquoted
                    let path = Path(child)
                    if path.isRoot || child.hasPrefix("$") || path.keys.contains(where: { Path.problem(with: $0) != nil || $0 == ".priority" }) {
                        throw ShellError("Query.orderByChild: argument was an invalid path = \"\(child)\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\"", column: token!.column)
                    }
                    params = params.ordered(by: .child(path))
                }
            case "--limitToFirst", "--limitToLast":
                let method = String(flag.dropFirst(2))
                guard let n = Int(token!.text), n > 0 else {
                    throw ShellError("Query.\(method): First argument must be a positive integer.", column: token!.column)
                }
                if limitSet {
                    throw ShellError("Query.\(method): Limit was already set (by another call to limitToFirst, limitToLast or limit).", column: token!.column)
                }
                limitSet = true
                params = flag == "--limitToFirst" ? params.limitToFirst(n) : params.limitToLast(n)
            default:
                let method = String(flag.dropFirst(2))
                let value = try boundValue(token!, method: method)
                let isStart = ["startAt", "startAfter", "equalTo"].contains(method)
                let isEnd = ["endAt", "endBefore", "equalTo"].contains(method)
                if isStart && startSet {
                    throw ShellError("Query.\(method): Starting point was already set (by another call to startAt, startAfter or equalTo).", column: token!.column)
                }
                if isEnd && endSet {
                    throw ShellError("Query.\(method): Ending point was already set (by another call to endAt, endBefore or equalTo).", column: token!.column)
                }
                startSet = startSet || isStart
                endSet = endSet || isEnd
                if let key, let problem = Path.problem(with: key.unquoted), key.unquoted != ChildKey.min.name, key.unquoted != ChildKey.max.name {
                    throw ShellError("Query.\(method): second argument was an invalid key = \"\(key.unquoted)\": \(problem)", column: key.column)
                }
                params = params.bound(named: method, value, key: key?.unquoted)!
            }
        }
        try validateBounds(params, args)
        return params
    }

    private static func boundValue(_ token: Token, method: String) throws -> Node {
        let node = try ValueParser.parse(token, base: .root)
        switch node.content {
        case .children, .leaf(.serverValue):
            throw ShellError("Query.\(method): First argument passed to \(method)() must be a string, number, boolean or null.", column: token.column)
        default:
            return node
        }
    }

    /// The checks the SDKs make once the ordering is known.
    private static func validateBounds(_ params: QueryParams, _ args: Arguments) throws {
        let bounds = [params.start, params.end].compactMap { $0 }
        let column = args.ordered.first { $0.name.hasPrefix("--start") || $0.name.hasPrefix("--end") || $0.name == "--equalTo" }?.value?.column
        switch params.index {
        case .key:
            if args.ordered.contains(where: { $0.key != nil }) {
                throw ShellError("Query: When ordering by key, you may only pass one argument to startAt(), endAt(), or equalTo().", column: column)
            }
            for bound in bounds {
                guard case .leaf(.string) = bound.value.content else {
                    throw ShellError("Query: When ordering by key, the argument passed to startAt(), startAfter(), endAt(), endBefore(), or equalTo() must be a string.", column: column)
                }
            }
        case .priority:
            for bound in bounds {
                if case .leaf(.bool) = bound.value.content {
                    throw ShellError("Query: When ordering by priority, the first argument passed to startAt(), startAfter() endAt(), endBefore(), or equalTo() must be a valid priority value (null, a number, or a string).", column: column)
                }
            }
        default:
            break
        }
    }

    /// `--events value,child_added`.
    static func events(from token: Token?) throws -> Set<EventType> {
        guard let token else { return Set(EventType.allCases) }
        var types = Set<EventType>()
        for name in token.unquoted.split(separator: ",") {
            guard let type = EventType(rawValue: String(name).trimmingCharacters(in: .whitespaces)) else {
                throw ShellError("unknown event type '\(name)': use value, child_added, child_changed, child_removed or child_moved", column: token.column)
            }
            types.insert(type)
        }
        if types.isEmpty { throw ShellError("--events needs at least one event type", column: token.column) }
        return types
    }
}

import Foundation
