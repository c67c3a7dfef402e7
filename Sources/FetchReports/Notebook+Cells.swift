import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// Code and Markdown cells, their outputs, and Python literals.
extension Notebook {
  /// Accumulates cells with sequential ids and execution counts.
  struct Cells {
    var cells: [JSON] = []

    /// `s` without trailing line breaks (a cell's last line has none).
    static func trimmed(_ s: String) -> String {
      var s = s
      while s.hasSuffix("\n") { s.removeLast() }
      return s
    }
    var count = 0
    var id: String { "cell-" + String(repeating: "0", count: max(0, 4 - String(cells.count + 1).count)) + String(cells.count + 1) }

    mutating func markdown(_ text: String) {
      cells.append(.object(["cell_type": .string("markdown"), "id": .string(id), "metadata": .object([:]), "source": .lines(Self.trimmed(text))]))
    }

    /// A code cell; `outputs` take the cell's execution count.
    mutating func code(_ source: String, outputs: [(Int) -> JSON] = []) {
      count += 1
      let n = count
      cells.append(
        .object([
          "cell_type": .string("code"), "execution_count": .int(n), "id": .string(id), "metadata": .object([:]),
          "outputs": .array(outputs.map { $0(n) }), "source": .lines(Self.trimmed(source)),
        ]))
    }
  }

  static func stream(_ text: String) -> (Int) -> JSON {
    { _ in .object(["name": .string("stdout"), "output_type": .string("stream"), "text": .lines(text)]) }
  }

  static func svg(_ svg: String, _ label: String) -> (Int) -> JSON {
    { _ in
      .object([
        "data": .object(["image/svg+xml": .lines(svg), "text/plain": .lines(label)]), "metadata": .object([:]),
        "output_type": .string("display_data"),
      ])
    }
  }

  static func table(html: String, plain: String) -> (Int) -> JSON {
    { n in
      .object([
        "data": .object(["text/html": .lines(html), "text/plain": .lines(plain)]), "execution_count": .int(n),
        "metadata": .object([:]), "output_type": .string("execute_result"),
      ])
    }
  }

  /// A DataFrame-like table: HTML as pandas writes it, and aligned text.
  static func frame(index: String, columns: [String], rows: [(String, [String])]) -> (html: String, plain: String) {
    let e = SVGPlot.escape
    var h = "<div>\n<table border=\"1\" class=\"dataframe\">\n  <thead>\n    <tr style=\"text-align: right;\">\n"
    h += "      <th></th>\n" + columns.map { "      <th>\(e($0))</th>\n" }.joined() + "    </tr>\n"
    h += "    <tr>\n      <th>\(e(index))</th>\n" + columns.map { _ in "      <th></th>\n" }.joined() + "    </tr>\n"
    h += "  </thead>\n  <tbody>\n"
    for (k, cells) in rows {
      h += "    <tr>\n      <th>\(e(k))</th>\n" + cells.map { "      <td>\(e($0))</td>\n" }.joined() + "    </tr>\n"
    }
    h += "  </tbody>\n</table>\n</div>"
    let w0 = ([index] + rows.map(\.0)).map(\.count).max() ?? 0
    let ws = columns.indices.map { i in ([columns[i]] + rows.map { $0.1[i] }).map(\.count).max() ?? 0 }
    func pad(_ s: String, _ w: Int, left: Bool) -> String {
      let f = String(repeating: " ", count: max(0, w - s.count))
      return left ? s + f : f + s
    }
    var lines = [pad("", w0, left: true) + zip(columns, ws).map { "  " + pad($0, $1, left: false) }.joined()]
    lines.append(pad(index, w0, left: true) + ws.map { "  " + String(repeating: " ", count: $0) }.joined())
    for (k, cells) in rows { lines.append(pad(k, w0, left: true) + zip(cells, ws).map { "  " + pad($0, $1, left: false) }.joined()) }
    return (h, lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }.joined(separator: "\n"))
  }

  /// A Python string literal for `s`.
  static func py(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
      switch u {
      case "\\": out += "\\\\"
      case "\"": out += "\\\""
      case "\n": out += "\\n"
      default:
        if u.value < 0x20 { out += "\\x" + (u.value < 16 ? "0" : "") + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) }
      }
    }
    return out + "\""
  }

  /// A Markdown-safe dataset title.
  static func title(_ d: String) -> String { d.isEmpty ? "the run" : MarkdownText.code(d) }
}
