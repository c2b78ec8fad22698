import RTDBData

/// Small adapters from the shell's words to the data model.
enum RTDBDataBridge {
    /// Decodes a double-quoted JSON string token.
    static func decodeJSONString(_ text: String) throws -> String {
        let node = try JSONReader.parse(text)
        if case .leaf(.string(let s)) = node.content { return s }
        return text
    }
}
