extension Node {
    /// Checks a value about to be written at `path` against the database's rules: every key
    /// name, the depth and length of every path in it, string sizes, finite numbers, and
    /// priorities that are strings or numbers. The engine applies it to every write, whatever
    /// front it came through; readers of text (JSON, the shell) check the same rules as they
    /// read, to point at the offending line and column.
    public func validate(at path: Path) throws {
        var keys = path.keys
        try validate(keys: &keys, bytes: path.utf8Length)
    }

    private func validate(keys: inout [String], bytes: Int) throws {
        func here() -> String { "/" + keys.joined(separator: "/") }
        if let priority {
            switch priority {
            case .number(let n) where !n.isFinite:
                throw DataError.invalidPriority(path: here(), reason: "a priority must be a finite number")
            case .bool:
                throw DataError.invalidPriority(path: here(), reason: "a priority must be a string or a number, not a boolean")
            case .string(let s) where s.utf8.count > Node.maxStringBytes:
                throw DataError.stringTooLong(path: (keys.isEmpty ? "" : here()) + "/.priority", bytes: s.utf8.count)
            default:
                break
            }
        }
        switch content {
        case .empty:
            return
        case .leaf(.number(let n)) where !n.isFinite:
            throw DataError.invalidValue(path: here(), reason: "numbers must be finite (no NaN or infinity)")
        case .leaf(.serverValue(.increment(let n))) where !n.isFinite:
            throw DataError.invalidValue(path: here(), reason: "an increment must be a finite number")
        case .leaf(.string(let s)) where s.utf8.count > Node.maxStringBytes:
            throw DataError.stringTooLong(path: here(), bytes: s.utf8.count)
        case .leaf:
            return
        case .children(let map):
            // A document's text had its keys, strings and numbers checked as it came in; only
            // the lengths of its paths depend on where it goes. Past them, the walk names the
            // path.
            if let extent = map.textExtent, keys.count + extent.depth <= Path.maxDepth,
               bytes + (keys.isEmpty ? 0 : 1) + extent.pathBytes <= Path.maxBytes {
                return
            }
            for (key, child) in map {
                let name = key.name
                keys.append(name)
                defer { keys.removeLast() }
                try Path.validate(key: name, in: here())
                let childBytes = bytes + name.utf8.count + (keys.count > 1 ? 1 : 0)
                if keys.count > Path.maxDepth { throw DataError.pathTooDeep(path: here(), depth: keys.count) }
                if childBytes > Path.maxBytes { throw DataError.pathTooLong(path: here(), bytes: childBytes) }
                try child.validate(keys: &keys, bytes: childBytes)
            }
        }
    }
}
