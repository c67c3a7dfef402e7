import Foundation

/// The one JSON writer of FetchLab's own files: Foundation objects as text
/// with sorted keys, so equal objects give equal bytes (manifests, shard and
/// dataset records, configuration hashes). The notebook, whose layout is
/// nbformat's, has its own encoder.
package enum JSONText {
  /// Indented text with a final line break.
  package static func pretty(_ object: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
      + "\n"
  }

  /// Compact text (for hashing and comparing).
  package static func canonical(_ object: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
  }

  /// Writes `object` as ``pretty(_:)`` text to `path`, atomically.
  package static func write(_ object: Any, to path: String) throws {
    let f = try AtomicTextFile(path: path)
    try f.write(pretty(object))
    try f.commit()
  }
}
