import FetchSupport
import FetchTraces
import FetchWorld

/// Which of a user's apps are replayed as "the app that fetches".
///
/// `top` and `min-opens` choose among apps that have content to fetch:
/// apps of an offline category (dialer, contacts, SMS, settings, camera,
/// gallery, local music, clock; `AppCategory`) are left out unless the
/// selection says `offline`. An app named with `names:` is replayed
/// whatever its category.
public enum AppSelection: Sendable, Equatable, CustomStringConvertible {
  /// The user's `k` most-opened apps (ties broken by name).
  case top(Int)
  /// Every app the user opened at least `n` times.
  case minOpens(Int)
  /// These apps, where the user opened them at least once.
  case named([String])
  /// The apps of a selection less those named in `except`, with apps of
  /// offline categories among the candidates when `offline` is true
  /// (`top:3/except:a,b/offline`).
  indirect case refined(AppSelection, except: [String], offline: Bool)

  /// Parses `top:3`, `min-opens:20` or `names:mail,news`, each optionally
  /// followed by `/except:A,B` (apps never to replay) and `/offline`
  /// (let `top` and `min-opens` choose offline apps too).
  public init(parsing s: String) throws {
    let pieces = s.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    var except: [String] = []
    var offline = false
    for m in pieces.dropFirst() {
      if m == "offline" {
        offline = true
      } else if m.hasPrefix("except:") {
        let names = m.dropFirst("except:".count).split(separator: ",").map(String.init).filter { !$0.isEmpty }
        guard !names.isEmpty else { throw Self.bad(.noNames, "--apps /except: needs at least one app name") }
        except += names
      } else {
        throw Self.bad(.unknownForm, "bad app selection modifier '/\(m)' in '\(s)'; use /except:A,B or /offline")
      }
    }
    let base = try Self.parseBase(pieces[0], whole: s)
    self = except.isEmpty && !offline ? base : .refined(base, except: except, offline: offline)
  }

  static func parseBase(_ s: String, whole: String) throws -> AppSelection {
    let parts = s.split(separator: ":", maxSplits: 1).map(String.init)
    switch (parts.first, parts.count) {
    case ("top", 2):
      guard let k = Int(parts[1]), k >= 1 else { throw Self.bad(.badCount, "--apps top:K needs K ≥ 1, got '\(whole)'") }
      return .top(k)
    case ("min-opens", 2):
      guard let n = Int(parts[1]), n >= 1 else { throw Self.bad(.badCount, "--apps min-opens:N needs N ≥ 1, got '\(whole)'") }
      return .minOpens(n)
    case ("names", 2):
      let names = parts[1].split(separator: ",").map(String.init).filter { !$0.isEmpty }
      guard !names.isEmpty else { throw Self.bad(.noNames, "--apps names: needs at least one app name") }
      return .named(names)
    default:
      throw Self.bad(.unknownForm, "bad app selection '\(whole)'; use top:K, min-opens:N or names:A,B (then /except:A,B, /offline)")
    }
  }

  /// The selection in the syntax ``init(parsing:)`` reads.
  public var description: String {
    switch self {
    case .top(let k): "top:\(k)"
    case .minOpens(let n): "min-opens:\(n)"
    case .named(let a): "names:" + a.joined(separator: ",")
    case .refined(let base, let except, let offline):
      base.description + (except.isEmpty ? "" : "/except:" + except.joined(separator: ",")) + (offline ? "/offline" : "")
    }
  }

  /// The most apps the selection replays for one user, at most `cap`
  /// (`cap` for `min-opens`, which has no bound of its own).
  package func mostAppsPerUser(cap: Int) -> Int {
    switch self {
    case .top(let k): min(k, cap)
    case .named(let n): min(n.count, cap)
    case .minOpens: cap
    case .refined(let base, _, _): base.mostAppsPerUser(cap: cap)
    }
  }

  /// The selected app indices of `trace`, most-opened first.
  ///
  /// - Complexity: O(a log a) in the trace's apps a.
  public func select(in trace: UserTrace) -> [Int32] {
    let counts = trace.openCounts()
    let ranked = counts.indices.filter { counts[$0] > 0 }.sorted {
      counts[$0] != counts[$1] ? counts[$0] > counts[$1] : trace.apps[$0] < trace.apps[$1]
    }
    return select(ranked: ranked, counts: counts, apps: trace.apps, except: [], offline: false)
  }

  func select(ranked: [Int], counts: [Int], apps: [String], except: Set<String>, offline: Bool) -> [Int32] {
    let candidates = ranked.filter { !except.contains(apps[$0]) }
    let content = offline ? candidates : candidates.filter { AppCategory(apps[$0]) != .offline }
    switch self {
    case .top(let k): return content.prefix(k).map { Int32($0) }
    case .minOpens(let n): return content.filter { counts[$0] >= n }.map { Int32($0) }
    case .named(let names): return candidates.filter { names.contains(apps[$0]) }.map { Int32($0) }
    case .refined(let base, let more, let all):
      return base.select(ranked: ranked, counts: counts, apps: apps, except: except.union(more), offline: offline || all)
    }
  }
}

/// A bad `--apps` value (or `apps` key of an experiment).
///
/// Match on ``code`` (a struct of named codes, so new codes do not break
/// callers), show ``message``.
public struct AppSelectionError: CodedError {
  /// The category of a ``AppSelectionError``.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    /// A stable kebab-case name.
    public let description: String

    /// `top:K` or `min-opens:N` with a count below 1 or not a number.
    public static let badCount = Code(description: "bad-count")
    /// `names:` without an app name.
    public static let noNames = Code(description: "no-names")
    /// Not one of `top:K`, `min-opens:N`, `names:A,B` (with `/except:A,B`
    /// and `/offline`).
    public static let unknownForm = Code(description: "unknown-form")
  }

  /// The category.
  public let code: Code
  /// What is wrong, in words (also the ``description``).
  public let message: String
  /// The option at fault, `--apps`.
  public var location: InputLocation

  package init(code: Code, message: String, location: InputLocation) {
    (self.code, self.message, self.location) = (code, message, location)
  }
}

extension AppSelection {
  /// An ``AppSelectionError`` located at the `--apps` option.
  static func bad(_ code: AppSelectionError.Code, _ message: String) -> AppSelectionError {
    AppSelectionError(code, message, location: InputLocation(field: "--apps"))
  }
}
