/// What `rtdb --version` prints: the version, and how this binary was built.
enum Version {
    static let number = "0.10.0"

    static var description: String {
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"
        #endif
        #if compiler(>=6.3)
        let compiler = "Swift 6.3"
        #elseif compiler(>=6.2)
        let compiler = "Swift 6.2"
        #else
        let compiler = "Swift 6"
        #endif
        #if arch(x86_64)
        let arch = "x86_64"
        #elseif arch(arm64)
        let arch = "arm64"
        #else
        let arch = "unknown architecture"
        #endif
        #if os(Linux)
        let system = "Linux"
        #elseif os(macOS)
        let system = "macOS"
        #else
        let system = "unknown system"
        #endif
        return "rtdb \(number) (\(configuration) build, \(compiler), \(system) \(arch))"
    }
}
