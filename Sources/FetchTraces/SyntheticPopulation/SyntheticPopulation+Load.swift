import FetchSupport
import Foundation

extension SyntheticPopulation.Parameters {
  /// Reads and validates parameters from a JSON file (`fetchlab synth
  /// --params`).
  ///
  /// - Throws: ``TraceFormatError`` naming the file, the line of the key at
  ///   fault and the key.
  package static func load(path: String) throws -> Self {
    try load(LocatedJSON.parse(contentsOf: path, what: "the parameter file"), file: path)
  }

  /// Reads and validates parameters from a JSON object (a `--params` file,
  /// or the `params` of an experiment's synthetic dataset, whose key path
  /// `field` prefixes the keys in errors).
  ///
  /// - Throws: ``TraceFormatError`` naming `file`, the line of the key at
  ///   fault (an unknown key, a value of the wrong type, a value out of
  ///   range) and the key.
  package static func load(_ json: LocatedJSON, file: String, field: String = "") throws -> Self {
    func named(_ key: String) -> String {
      field.isEmpty ? (key.isEmpty ? "-" : key) : key.isEmpty ? field : field + "." + key
    }
    guard case .object = json.value else {
      throw TraceFormatError(file: file, line: json.line, field: named(""), message: "expected a JSON object of parameters")
    }
    func located(_ e: SyntheticPopulation.ParameterError) -> TraceFormatError {
      TraceFormatError(
        file: file, line: json.firstMember(named: e.key)?.line ?? json.line, field: named(e.key), message: e.reason)
    }
    let p: Self
    do {
      p = try JSONDecoder().decode(Self.self, from: JSONSerialization.data(withJSONObject: json.foundation))
    } catch let e as SyntheticPopulation.ParameterError {
      throw located(e)
    } catch let e as DecodingError {
      let context: DecodingError.Context
      switch e {
      case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): context = c
      @unknown default: throw TraceFormatError(file: file, line: json.line, field: named(""), message: "\(e)")
      }
      var path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
      if case .keyNotFound(let key, _) = e { path.append(key.stringValue) }
      throw TraceFormatError(
        file: file, line: json.line(at: path), field: named(path.joined(separator: ".")), message: context.debugDescription)
    }
    do {
      try p.validate()
    } catch let e as SyntheticPopulation.ParameterError {
      throw located(e)
    }
    return p
  }
}
