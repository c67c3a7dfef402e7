/// Text from a run's files (app, user, trace, policy and dataset names)
/// made inert in Markdown: it reads as the same characters and never as
/// markup, HTML or a link.
///
/// CommonMark (https://spec.commonmark.org/0.31.2/) lets a backslash escape
/// any ASCII punctuation character; `<`, `>` and `&` become entity
/// references instead, which every renderer decodes to the character and
/// none reads as HTML. A line break becomes a space, so a value never ends
/// a paragraph, a table row or a heading.
package enum MarkdownText {
  /// Punctuation that can start or end Markdown markup inside a line:
  /// emphasis, code, links and images, table cells, headings and
  /// strikethrough (every escaped value follows other text on its line, so
  /// list and quote markers need no escape).
  private static let active: Set<Character> = [
    "\\", "`", "*", "_", "[", "]", "(", ")", "!", "|", "~", "#",
  ]

  /// `s` escaped for running Markdown text, a table cell or alt text.
  ///
  ///     MarkdownText.escape("[x](javascript:alert(1))")  // \[x\]\(javascript:alert\(1\)\)
  ///     MarkdownText.escape("<script>")                   // &lt;script&gt;
  /// - Complexity: O(n) in the characters of `s`.
  package static func escape(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for c in s {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case _ where c.isNewline: out += " "
      case _ where active.contains(c): out += "\\" + String(c)
      default: out.append(c)
      }
    }
    return out
  }

  /// `s` as a Markdown code span: fenced by one backtick more than the
  /// longest run of backticks in `s` (CommonMark's rule), padded with a
  /// space when it starts or ends with a backtick, line breaks as spaces.
  /// Nothing inside a code span is markup or HTML.
  ///
  /// - Complexity: O(n) in the characters of `s`.
  package static func code(_ s: String) -> String {
    let flat = String(s.map { $0.isNewline ? " " : $0 })
    var longest = 0, run = 0
    for c in flat {
      run = c == "`" ? run + 1 : 0
      longest = max(longest, run)
    }
    let fence = String(repeating: "`", count: longest + 1)
    let pad = flat.hasPrefix("`") || flat.hasSuffix("`") ? " " : ""
    return fence + pad + flat + pad + fence
  }
}
