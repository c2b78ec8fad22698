import XCTest
@testable import RTDBData
import RTDBTestSupport

final class NodeTests: XCTestCase {
    /// The entries at a range of positions, found in one walk, are those `element(at:)`
    /// finds one by one: packed, as a tree, and read from JSON text; every range, empty
    /// and past the end included.
    func testTheEntriesOfARangeOfPositions() throws {
        for count in [0, 5, 16, 17, 200, 1000] {
            let children = (0..<count).map { (ChildKey("k\($0)"), Node(Double($0))) }
            let text = "{" + (0..<count).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}"
            for map in [ChildMap(unsorted: children), try JSONReader.parse(text).children] {
                var rng = SeededRandom(seed: UInt64(count) + 1)
                for _ in 0..<50 {
                    let lo = Int(rng.next() % UInt64(count + 2)), hi = lo + Int(rng.next() % 40)
                    var seen: [String] = []
                    map.forEach(in: lo..<hi) { key, value in seen.append(key.name + "=" + JSONWriter.string(value)) }
                    let expected = (lo..<max(lo, min(hi, map.count))).map { i in map.element(at: i) }.map { $0.key.name + "=" + JSONWriter.string($0.value) }
                    XCTAssertEqual(seen, expected, "\(count) \(lo)..<\(hi)")
                }
            }
        }
    }

    func testSettingAndRemoving() throws {
        var root = Node.empty
        root = root.setting(Path("a/b"), to: Node(1))
        root = root.setting(Path("a/c"), to: Node("x"))
        XCTAssertEqual(JSONWriter.string(root), #"{"a":{"b":1,"c":"x"}}"#)
        root = root.setting(Path("a/b"), to: .empty)
        root = root.setting(Path("a/c"), to: .empty)
        XCTAssertTrue(root.isEmpty, "emptied parents vanish")
    }

    func testLeafBecomesParent() {
        let root = Node(5).setting(Path("x"), to: Node(1))
        XCTAssertEqual(JSONWriter.string(root), #"{"x":1}"#)
    }

    func testPriorityPath() throws {
        let root = try JSONReader.parse(#"{"a": 1}"#).setting(Path("a/.priority"), to: Node(7))
        XCTAssertEqual(JSONWriter.string(root, options: .init(export: true)), #"{"a":{".value":1,".priority":7}}"#)
        XCTAssertEqual(root.child(at: Path("a/.priority")), Node(7))
    }

    func testOldVersionsAreUnchanged() {
        let v1 = Node.empty.setting(Path("a"), to: Node(1))
        let v2 = v1.setting(Path("a"), to: Node(2))
        XCTAssertEqual(v1.child("a"), Node(1))
        XCTAssertEqual(v2.child("a"), Node(2))
    }

    func testMergeAndShallow() throws {
        let root = try JSONReader.parse(#"{"a": {"x": 1, "y": 2}, "b": 3}"#)
        let merged = root.merging([(Path("a/x"), Node(10)), (Path("b"), .empty), (Path("c"), Node("new"))])
        XCTAssertEqual(JSONWriter.string(merged), #"{"a":{"x":10,"y":2},"c":"new"}"#)
        XCTAssertEqual(JSONWriter.string(merged.shallow), #"{"a":true,"c":true}"#)
        XCTAssertEqual(JSONWriter.string(Node(5).shallow), "5")
    }

    /// A value cut to a depth: objects there become their number of children, priorities
    /// above the cut kept; leaves and nothing are themselves.
    func testCutBelowADepth() throws {
        let root = try JSONReader.parse(#"{"a": {"x": 1, "y": {"z": 2}}, "b": 3, "c": {".priority": 4, "q": {"r": {"s": 1}}}}"#)
        XCTAssertEqual(JSONWriter.string(root.cut(below: 0)), #"{".count":3}"#)
        XCTAssertEqual(JSONWriter.string(root.cut(below: 1)), #"{"a":{".count":2},"b":3,"c":{".count":1}}"#)
        XCTAssertEqual(JSONWriter.string(root.cut(below: 2), options: .init(export: true)), #"{"a":{"x":1,"y":{".count":1}},"b":3,"c":{".priority":4,"q":{".count":1}}}"#)
        XCTAssertEqual(root.cut(below: 9), root)
        XCTAssertEqual(Node(5).cut(below: 0), Node(5))
        XCTAssertEqual(Node.empty.cut(below: 0), .empty)
    }

    func testServerValueResolution() throws {
        let existing = try JSONReader.parse(#"{"n": 5, "s": "str"}"#)
        let write = try JSONReader.parse(#"{"n": {".sv": {"increment": 2}}, "s": {".sv": {"increment": 1}}, "m": {".sv": {"increment": 3}}, "t": {".sv": "timestamp"}}"#)
        let resolved = write.resolvingServerValues(now: 1000, existing: existing)
        XCTAssertEqual(JSONWriter.string(resolved), #"{"m":3,"n":7,"s":1,"t":1000}"#)
        XCTAssertFalse(resolved.containsServerValues)
        let prioritised = try JSONReader.parse(#"{".value": 1, ".priority": {".sv": "timestamp"}}"#)
        XCTAssertEqual(prioritised.resolvingServerValues(now: 42, existing: .empty).priority, .number(42))
    }
}

final class ChildMapTests: XCTestCase {
    func testRandomOperationsKeepOrderAndBalance() {
        var rng = SeededRandom.forTest()
        var map = ChildMap()
        var model: [String: Int] = [:]
        for i in 0..<5000 {
            let key = String(Int.random(in: 0..<800, using: &rng)) + (Bool.random(using: &rng) ? "x" : "")
            if Int.random(in: 0..<3, using: &rng) == 0 {
                map = map.removing(ChildKey(key))
                model[key] = nil
            } else {
                map = map.inserting(ChildKey(key), Node(Double(i)))
                model[key] = i
            }
        }
        XCTAssertTrue(map.checkInvariants())
        XCTAssertEqual(map.count, model.count)
        XCTAssertEqual(map.keys.map(\.name), model.keys.map(ChildKey.init).sorted().map(\.name))
        for (k, v) in model { XCTAssertEqual(map[k], Node(Double(v))) }
        for i in stride(from: 0, to: map.count, by: 37) {
            let e = map.element(at: i)
            XCTAssertEqual(map.rank(of: e.key), i)
        }
    }

    /// Around the size where a packed array of children becomes a tree, every operation
    /// agrees with a plain dictionary, and a packed map equals a tree of the same children.
    func testPackedAndTreeChildrenAgree() {
        var rng = SeededRandom(seed: 20261124)
        for round in 0..<400 {
            var map = ChildMap()
            var model: [String: Node] = [:]
            let keySpace = [4, 12, 20, 40][round % 4]
            for step in 0..<60 {
                let key = String(Int.random(in: 0..<keySpace, using: &rng)) + (Bool.random(using: &rng) ? "k" : "")
                let value = Int.random(in: 0..<4, using: &rng) == 0 ? Node(.number(Double(step)), priority: .number(1)) : Node(Double(step))
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:
                    map = map.removing(ChildKey(key))
                    model[key] = nil
                case 1:
                    // A batch: some keys set, some removed.
                    let keys = Set((0..<Int.random(in: 1..<8, using: &rng)).map { _ in String(Int.random(in: 0..<keySpace, using: &rng)) })
                        .map(ChildKey.init).sorted()
                    let removes = keys.map { _ in Bool.random(using: &rng) }
                    map = map.updating(sorted: keys) { i, old in
                        XCTAssertEqual(old, model[keys[i].name] ?? .empty)
                        return removes[i] ? .empty : value
                    }
                    for (key, remove) in zip(keys, removes) { model[key.name] = remove ? nil : value }
                case 2:
                    // One child changed where it is found: removed, replaced or added.
                    let remove = Bool.random(using: &rng)
                    var calls = 0
                    map = map.modifying(ChildKey(key)) { old in
                        calls += 1
                        XCTAssertEqual(old, model[key] ?? .empty)
                        return remove ? .empty : value
                    }
                    XCTAssertEqual(calls, 1)
                    model[key] = remove ? nil : value
                default:
                    map = map.inserting(ChildKey(key), value)
                    model[key] = value
                }
                XCTAssertTrue(map.checkInvariants(), "round \(round) step \(step)")
                XCTAssertEqual(map.prioritizedCount, model.values.filter { $0.priority != nil }.count, "round \(round) step \(step)")
            }
            let sortedKeys = model.keys.map(ChildKey.init).sorted()
            XCTAssertEqual(map.keys, sortedKeys)
            XCTAssertEqual(map.count, model.count)
            XCTAssertEqual(map.prioritizedCount, model.values.filter { $0.priority != nil }.count)
            for (i, key) in sortedKeys.enumerated() {
                XCTAssertEqual(map[key], model[key.name])
                XCTAssertEqual(map.rank(of: key), i)
                XCTAssertEqual(map.element(at: i).key, key)
            }
            XCTAssertEqual(map.rank(of: ChildKey("zzz")), model.count)
            XCTAssertEqual(map.first?.key, sortedKeys.first)
            XCTAssertEqual(map.last?.key, sortedKeys.last)
            let tree = ChildMap(tree: WeightBalancedTree(sorted: sortedKeys.map { ChildEntry(key: $0, value: model[$0.name]!) }),
                                prioritizedCount: map.prioritizedCount)
            XCTAssertEqual(map, tree)
            XCTAssertEqual(tree, map)
        }
    }

    func testReadObjectsKeepTheLastOfDuplicateKeys() throws {
        let small = try JSONReader.parse(#"{"b":1,"a":2,"b":3,"c":null,"a":{"x":1}}"#)
        XCTAssertEqual(JSONWriter.string(small), #"{"a":{"x":1},"b":3}"#)
        XCTAssertTrue(small.children.checkInvariants())
        // More children than a packed array holds, out of order, with repeats.
        let members = (0..<40).map { #""k\#(($0 * 7) % 25)":\#($0)"# }
        let large = try JSONReader.parse("{" + members.joined(separator: ",") + "}")
        XCTAssertEqual(large.childCount, 25)
        XCTAssertTrue(large.children.checkInvariants())
        for k in 0..<25 {
            let last = (0..<40).last { ($0 * 7) % 25 == k }!
            XCTAssertEqual(large.child("k\(k)"), Node(Double(last)))
        }
    }

    /// Lists in every order a sort meets (shuffled, reversed, nearly sorted, long cycles), with
    /// and without repeated keys: the map holds each key once, with the value read last, in key
    /// order, and every value is kept alive exactly once (each is read back).
    func testUnsortedListsOfEverySizeAndShape() {
        var rng = SeededRandom(seed: 7)
        for n in [17, 18, 31, 64, 257, 1000] {
            let base = (0..<n).map { "k\($0 * 37 % 1009)" }
            let shapes: [[String]] = [
                base.shuffled(using: &rng),
                base.reversed(),
                Array(base.dropFirst()) + [base[0]],
                base + base.prefix(n / 3).shuffled(using: &rng),
                (0..<n).map { _ in base[Int(rng.next() % UInt64(n / 2))] },
            ]
            for keys in shapes {
                var expected: [String: Int] = [:]
                for (i, key) in keys.enumerated() { expected[key] = i }
                let map = ChildMap(unsorted: keys.enumerated().map { (ChildKey($0.element), Node("value \($0.offset)")) })
                XCTAssertTrue(map.checkInvariants())
                XCTAssertEqual(map.map(\.key.name), expected.keys.sorted { ChildKey.compare(ChildKey($0), ChildKey($1)) < 0 })
                for entry in map { XCTAssertEqual(entry.value, Node("value \(expected[entry.key.name] ?? -1)")) }
            }
        }
    }

    func testBuildFromSorted() {
        let entries = (0..<1000).map { (ChildKey(String($0)), Node(Double($0))) }
        let map = ChildMap(sorted: entries)
        XCTAssertTrue(map.checkInvariants())
        XCTAssertEqual(map.first?.key.name, "0")
        XCTAssertEqual(map.last?.key.name, "999")
    }
}

final class PushIDTests: XCTestCase {
    func testFormatAndOrder() {
        var gen = PushIDGenerator()
        var ids: [String] = []
        for i in 0..<2000 { ids.append(gen.next(now: 1_700_000_000_000 + Int64(i / 500))) }
        XCTAssertTrue(ids.allSatisfy { $0.count == 20 })
        XCTAssertEqual(ids, ids.sorted { ChildKey.compare(ChildKey($0), ChildKey($1)) < 0 })
        XCTAssertEqual(Set(ids).count, ids.count)
        // The first 8 characters encode the time.
        XCTAssertEqual(String(ids[0].prefix(8)), "-NjEtLV-")
        XCTAssertTrue(ids.allSatisfy { id in id.allSatisfy { PushIDGenerator.alphabet.contains($0) } })
    }

    func testIncrementCarries() {
        struct Fixed: RandomNumberGenerator { mutating func next() -> UInt64 { UInt64.max } }
        var gen = PushIDGenerator()
        var rng = Fixed()
        let a = gen.next(now: 5, using: &rng)
        let b = gen.next(now: 5, using: &rng)
        XCTAssertTrue(a.hasSuffix("zzzzzzzzzzzz"), a)
        XCTAssertTrue(b.hasSuffix("------------"), b)  // all 63s roll over
    }

    func testChildMapCountsPrioritizedChildren() throws {
        var map = ChildMap()
        map = map.inserting(ChildKey("a"), Node(1))
        XCTAssertEqual(map.prioritizedCount, 0)
        map = map.inserting(ChildKey("b"), Node(2).withPriority(.number(1)))
        map = map.inserting(ChildKey("c"), Node(3).withPriority(.string("x")))
        XCTAssertEqual(map.prioritizedCount, 2)
        map = map.inserting(ChildKey("b"), Node(2).withPriority(.number(5)))  // replaced, still prioritized
        XCTAssertEqual(map.prioritizedCount, 2)
        map = map.inserting(ChildKey("c"), Node(3))  // priority dropped
        XCTAssertEqual(map.prioritizedCount, 1)
        map = map.removing(ChildKey("a"))
        XCTAssertEqual(map.prioritizedCount, 1)
        map = map.removing(ChildKey("b"))
        XCTAssertEqual(map.prioritizedCount, 0)
        let parsed = try JSONReader.parse(#"{"x":{".value":1,".priority":2},"y":3}"#)
        XCTAssertEqual(parsed.children.prioritizedCount, 1)
    }
}

/// Many writes applied at once (`Node.merging`, `WeightBalancedTree.updating`) give the tree
/// that writing them one at a time gives, balanced.
final class BatchWriteTests: XCTestCase {
    func testTreeUpdatingMatchesOneAtATime() {
        var rng = SeededRandom.forTest()
        for round in 0..<300 {
            let size = [0, 1, 5, 40, 300][round % 5]
            var tree = WeightBalancedTree(sorted: (0..<size).map { ChildEntry(key: ChildKey(String($0 * 2)), value: Node(Double($0))) })
            var changes: [Int: Bool] = [:]
            for _ in 0..<Int.random(in: 1..<200, using: &rng) { changes[Int.random(in: 0..<(size * 2 + 20), using: &rng)] = Bool.random(using: &rng) }
            let sorted = changes.map { (element: ChildEntry(key: ChildKey(String($0.key)), value: Node("v\($0.key)")), keep: $0.value) }
                .sorted { ChildKey.compare($0.element.key, $1.element.key) < 0 }
            // In one pass, on a tree shared with `tree` half of the time (which must stay as it was).
            var batch = round % 2 == 0 ? tree : WeightBalancedTree(sorted: Array(tree))
            let before = tree.map { "\($0.key)=\(JSONWriter.string($0.value))" }
            var seen: [Int] = []
            batch.update(sorted: sorted.map(\.element), change: { i, element in
                seen.append(i)
                element = sorted[i].element
                return sorted[i].keep
            }, add: { i in
                seen.append(i)
                return sorted[i].keep ? sorted[i].element : nil
            })
            XCTAssertEqual(seen.sorted(), Array(sorted.indices), "round \(round): each probe is changed once")
            XCTAssertEqual(tree.map { "\($0.key)=\(JSONWriter.string($0.value))" }, before, "round \(round): the shared tree is as it was")
            for change in sorted { tree = change.keep ? tree.inserting(change.element) : tree.removing(change.element) }
            XCTAssertTrue(batch.checkInvariants(), "round \(round)")
            XCTAssertEqual(batch.map { "\($0.key)=\(JSONWriter.string($0.value))" }, tree.map { "\($0.key)=\(JSONWriter.string($0.value))" })
        }
    }

    /// A change in place, in one descent, gives what a sorted list of the elements gives, sees
    /// the element it changes, and leaves a copy taken before it (another version sharing the
    /// tree) as it was.
    func testTreeModifyInPlaceMatchesAModelAndSparesCopies() {
        var rng = SeededRandom(seed: 20261126)
        let text = { (entries: [ChildEntry]) in entries.map { "\($0.key)=\(JSONWriter.string($0.value))" } }
        for round in 0..<200 {
            let size = [0, 1, 5, 40, 300][round % 5]
            var model = (0..<size).map { ChildEntry(key: ChildKey(String($0 * 2)), value: Node(Double($0))) }
            var tree = WeightBalancedTree(sorted: model)
            for step in 0..<40 {
                let key = ChildKey(String(Int.random(in: 0..<(size * 2 + 20), using: &rng)))
                let probe = ChildEntry(key: key, value: .empty)
                let replacement = Bool.random(using: &rng) ? ChildEntry(key: key, value: Node("v\(step)")) : nil
                let held = Bool.random(using: &rng) ? tree : nil
                let heldText = held.map { text(Array($0)) }
                // Held by nothing else, the top branch stays the same object when the change is below it.
                // (Compared by identity: a reference held here would itself make the tree shared.)
                let top = held == nil && tree.top?.element.key != key ? tree.root.map(ObjectIdentifier.init) : nil
                let at = model.firstIndex { ChildKey.compare($0.key, key) >= 0 } ?? model.count
                let found = at < model.count && model[at].key == key
                var seen: [Node?] = []
                tree.modify(probe, change: { element in
                    seen.append(element.value)
                    guard let replacement else { return false }
                    element = replacement
                    return true
                }, add: {
                    seen.append(nil)
                    return replacement
                })
                XCTAssertEqual(seen, [found ? model[at].value : nil], "round \(round) step \(step)")
                switch (found, replacement) {
                case (true, let r?): model[at] = r
                case (true, nil): model.remove(at: at)
                case (false, let r?): model.insert(r, at: at)
                case (false, nil): break
                }
                XCTAssertTrue(tree.checkInvariants(), "round \(round) step \(step)")
                XCTAssertEqual(text(Array(tree)), text(model), "round \(round) step \(step)")
                if let held { XCTAssertEqual(text(Array(held)), heldText, "round \(round) step \(step)") }
                if let top, found, replacement != nil { XCTAssertEqual(tree.root.map(ObjectIdentifier.init), top, "round \(round) step \(step): changed in place") }
            }
        }
    }

    /// `setting` changes each child on its way where it finds it. It gives what a reference
    /// gives that rebuilds each map on the way from its entries (no lookup, insertion or
    /// removal in a map), over leaves that become objects, priorities at the end and in the
    /// middle of a path, and lists packed and as trees.
    func testSettingMatchesChildByChild() throws {
        func reference(_ node: Node, _ keys: ArraySlice<String>, _ value: Node) -> Node {
            guard let first = keys.first else { return value }
            let below = { (old: Node) in reference(old, keys.dropFirst(), value) }
            // The priority itself; with keys below it, what is written there is an object.
            if first == ".priority" { return node.withPriority(below(.empty).leafValue) }
            let key = ChildKey(first)
            if node.isLeaf {
                let new = below(.empty)
                return new.isEmpty ? node : Node(children: ChildMap(unsorted: [(key, new)]), priority: node.priority)
            }
            var entries = node.children.filter { $0.key != key }.map { ($0.key, $0.value) }
            let new = below(node.children[key] ?? .empty)
            if !new.isEmpty { entries.append((key, new)) }
            return Node(children: ChildMap(unsorted: entries), priority: node.priority)
        }
        var rng = SeededRandom(seed: 20261126)
        let list = (0..<40).map { #""k\#($0)":{"n":\#($0)}"# }.joined(separator: ",")
        var node = try JSONReader.parse(#"{"a":{"x":1,"y":{"z":2}},"b":"leaf","c":{".priority":3,"k":true},"list":{\#(list)}}"#)
        let paths = ["a", "a/x", "a/y/z", "a/w", "b", "b/q", "b/q/r", "c/.priority", "c/k", "c/m", "c/m/.priority", "list/k7", "list/k7/n",
                     "list/k39/n", "list/k40/n", "list/k3/.priority", "new/n", ".priority", "list/.priority", "c/.priority/x"]
        let values = [Node.empty, Node(1), Node("s"), try JSONReader.parse(#"{"p":{"q":1}}"#), Node(.string("x"), priority: .number(1))]
        // The same writes made in place, on a tree no other copy holds (as the engine's).
        var live = try JSONReader.parse(JSONWriter.string(node, options: .init(export: true)))
        for step in 0..<3000 {
            let path = Path(paths.randomElement(using: &rng)!), value = values.randomElement(using: &rng)!
            let expected = reference(node, path.keys[...], value)
            let actual = node.setting(path, to: value)
            live.set(path, to: value)
            XCTAssertEqual(actual, expected, "step \(step): \(path) = \(JSONWriter.string(value))")
            XCTAssertEqual(live, expected, "step \(step): \(path) = \(JSONWriter.string(value)), in place")
            XCTAssertEqual(JSONWriter.string(actual, options: .init(export: true)), JSONWriter.string(expected, options: .init(export: true)))
            checkMaps(actual, "step \(step)")
            checkMaps(live, "step \(step), in place")
            // Now and then the list is refilled, so it goes on being written as a tree.
            if step % 300 == 299 {
                let refilled = try JSONReader.parse("{\(list)}")
                node = actual.setting(Path("list"), to: refilled)
                live.set(Path("list"), to: refilled)
            } else {
                node = actual
            }
        }
    }

    /// Every map in `node` is ordered and balanced, and counts its children with a priority.
    private func checkMaps(_ node: Node, _ message: String) {
        guard case .children(let map) = node.content else { return }
        XCTAssertTrue(map.checkInvariants(), message)
        XCTAssertEqual(map.prioritizedCount, map.filter { $0.value.priority != nil }.count, message)
        for entry in map { checkMaps(entry.value, message) }
    }

    func testMergingMatchesOneAtATime() throws {
        var rng = SeededRandom.forTest()
        let start = try JSONReader.parse(#"{"a":{"x":1,"y":{"z":2}},"b":"leaf","c":{".priority":3,"k":true},"list":{"1":1,"2":2,"3":3}}"#)
        let paths = ["a", "a/x", "a/y/z", "a/w", "b", "b/q", "c/.priority", "c/k", "c/m", "list/1", "list/2", "list/9", "list/10/deep", "new/n", "new", ".priority"]
        let values = [Node.empty, Node(1), Node("s"), try JSONReader.parse(#"{"p":{"q":1}}"#), Node(.string("x"), priority: .number(1))]
        for _ in 0..<500 {
            let entries = (0..<Int.random(in: 1..<30, using: &rng)).map { _ in
                (Path(paths.randomElement(using: &rng)!), values.randomElement(using: &rng)!)
            }
            let expected = entries.reduce(start) { $0.setting($1.0, to: $1.1) }
            XCTAssertEqual(JSONWriter.string(start.merging(entries)), JSONWriter.string(expected), "\(entries.map { "\($0.0)=\(JSONWriter.string($0.1))" })")
            var live = try JSONReader.parse(JSONWriter.string(start, options: .init(export: true)))
            live.merge(entries)
            XCTAssertEqual(JSONWriter.string(live), JSONWriter.string(expected), "in place: \(entries.map { "\($0.0)=\(JSONWriter.string($0.1))" })")
        }
        XCTAssertEqual(JSONWriter.string(start), #"{"a":{"x":1,"y":{"z":2}},"b":"leaf","c":{"k":true},"list":[null,1,2,3]}"#)
        // A list's many children at once, as an import writes them.
        var list = Node.empty
        for i in 0..<2000 { list = list.setting(Path("k\(i)/v"), to: Node(Double(i))) }
        let update = (0..<3000).map { (Path("k\($0 * 3 % 4000)/v"), $0 % 7 == 0 ? Node.empty : Node(Double(-$0))) }
        let merged = list.merging(update)
        let expected = JSONWriter.string(update.reduce(list) { $0.setting($1.0, to: $1.1) })
        XCTAssertEqual(JSONWriter.string(merged), expected)
        XCTAssertTrue(merged.children.checkInvariants())
        // In place, both ways: a few children of a big list one by one, many in one pass.
        var live = Node.empty
        for i in 0..<2000 { live.set(Path("k\(i)/v"), to: Node(Double(i))) }
        XCTAssertEqual(live, list)
        live.merge(update)
        XCTAssertEqual(JSONWriter.string(live), expected)
        let few = (0..<40).map { (Path("k\($0 * 97 % 4500)/w"), $0 % 5 == 0 ? Node.empty : Node(Double($0))) }
        live.merge(few)
        XCTAssertEqual(JSONWriter.string(live), JSONWriter.string(few.reduce(merged) { $0.setting($1.0, to: $1.1) }))
        XCTAssertTrue(live.children.checkInvariants())
    }
}
