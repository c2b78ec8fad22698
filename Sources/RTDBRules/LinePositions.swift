/// Lines and columns (from 1) of offsets in a rules file's Unicode scalars: where an error
/// and a coverage report's parts are. An offset past the end is the end.
struct LinePositions {
    private var starts: [Int] = [0]
    private let count: Int

    init(_ scalars: [Unicode.Scalar]) {
        count = scalars.count
        for (i, scalar) in scalars.enumerated() where scalar == "\n" { starts.append(i + 1) }
    }

    func position(of offset: Int) -> (line: Int, column: Int) {
        let offset = min(max(0, offset), count)
        var low = 0, high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return (low + 1, offset - starts[low] + 1)
    }
}
