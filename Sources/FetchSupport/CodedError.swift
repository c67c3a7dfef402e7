/// The envelope of FetchLab's errors: a stable ``code`` to match on, the
/// ``message`` to show (also the error's description), and the
/// ``location`` of the fault (the file, line and field of an input, or what
/// the error's domain locates by, e.g. a LAPACK `info` value).
///
/// An error type declares its codes and stores the three parts; matching,
/// showing and the usual initializers follow from this protocol:
///
///     public struct ExperimentError: CodedError {
///       public struct Code: … { … }
///       public let code: Code
///       public let message: String
///       public var location: InputLocation
///       package init(code: Code, message: String, location: InputLocation) { … }
///     }
///
///     catch let e as ExperimentError where e.code == .badShard { print(e) }
package protocol CodedError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The category: a struct of named codes or an enum, described by a stable name.
  associatedtype Code: Hashable, Sendable, CustomStringConvertible
  /// Where the fault lies.
  associatedtype Location: ErrorLocation, Sendable

  /// The category.
  var code: Code { get }
  /// What is wrong, in words (also the ``description``).
  var message: String { get }
  /// Where the fault lies, ``ErrorLocation/unknown`` when not known.
  var location: Location { get set }

  /// An error of `code` with `message` at `location`, stored as given.
  init(code: Code, message: String, location: Location)
}

extension CodedError {
  /// An error of `code` with `message` at `location` (unknown by default).
  package init(_ code: Code, _ message: String, location: Location = .unknown) {
    self.init(code: code, message: message, location: location)
  }

  /// The message.
  public var description: String { message }
}

/// The location type of a ``CodedError``: it has an unknown value.
package protocol ErrorLocation: Hashable {
  /// Nothing is known.
  static var unknown: Self { get }
}

extension Optional: ErrorLocation where Wrapped: Hashable {
  package static var unknown: Self { nil }
}
