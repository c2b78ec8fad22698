import Crypto
import Foundation

// Follows the Firebase JS SDK's the node hash of LeafNode and ChildrenNode (core/snap/LeafNode.ts, ChildrenNode.ts).

extension Node {
    /// The node hash the realtime protocol uses for compare-and-set, listens and ETags:
    /// base64(SHA-1) of a canonical text; "" for the empty node.
    public var hashString: String {
        switch content {
        case .empty:
            return ""
        case .leaf(let v):
            var text = Node.priorityHashText(priority)
            text += Node.leafHashText(v)
            return Node.sha1Base64(text)
        case .children:
            var text = Node.priorityHashText(priority)
            var any = false
            for (key, child) in Index.priority.sortedChildren(of: self) {
                let h = child.hashString
                if h.isEmpty { continue }
                any = true
                text += ":" + key.name + ":" + h
            }
            if text.isEmpty && !any { return "" }
            return Node.sha1Base64(text)
        }
    }

    static func priorityHashText(_ p: LeafValue?) -> String {
        guard let p else { return "" }
        return "priority:" + leafHashText(p) + ":"
    }

    static func leafHashText(_ v: LeafValue) -> String {
        switch v {
        case .number(let n): return "number:" + hex64(n)
        case .string(let s): return "string:" + s
        case .bool(let b): return b ? "boolean:true" : "boolean:false"
        case .serverValue: return "object:[object Object]"
        }
    }

    static func hex64(_ n: Double) -> String {
        String(n.bitPattern, radix: 16).leftPadded(to: 16)
    }

    static func sha1Base64(_ text: String) -> String {
        Data(Insecure.SHA1.hash(data: Data(text.utf8))).base64EncodedString()
    }
}
