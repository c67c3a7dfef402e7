import Foundation

/// Lines (or CSV records) of a file descriptor, read in large blocks and
/// returned in place: the one line reader of the trace reader and the log
/// importers.
///
/// A line is returned without its LF or CRLF and stays valid until the next
/// call. With `quotedLineBreaks`, a line break inside an RFC 4180 quoted
/// field (`"a\nb"`, as ``CSV/field(_:)`` writes a name with a line break)
/// does not end the record: the record, line breaks included, is returned
/// whole, and ``line`` is the line it starts on.
///
/// - Complexity: O(bytes) with `memchr` scans (a short record 8 bytes at a
///   time, ``nextShort()``); no allocation after `init`.
///
/// `next()` is inlinable and its state exempt from dynamic exclusivity
/// checks, so the reader costs its callers in other modules no call per
/// line (measured in docs/performance.md). A reader belongs to one thread
/// at a time.
package final class LineReader {
  /// Why reading stopped.
  package enum Failure: Error, Equatable {
    /// A record longer than the limit, starting on `line`.
    case tooLong(line: Int, limit: Int)
    /// `read(2)` failed.
    case readError(line: Int, message: String)
    /// A quoted field opened in the record starting on `line` is still
    /// open at the end of the input or after `maxLineBytes`.
    case unterminatedQuote(line: Int)
  }

  /// The 1-based line the last returned record starts on (0 before the first).
  @exclusivity(unchecked) package internal(set) var line = 0
  /// Bytes consumed so far, line endings included.
  @exclusivity(unchecked) package internal(set) var bytesRead = 0
  /// Called with every block of bytes as it is read, in order (to hash
  /// exactly the bytes parsed, without a second pass).
  @exclusivity(unchecked) package var onRead: ((UnsafeRawBufferPointer) -> Void)?
  /// Called once when the input is exhausted, before its last bytes are
  /// returned (to report a failed decompressor before its partial output is
  /// parsed).
  @exclusivity(unchecked) package var onEnd: (() throws -> Void)?

  @usableFromInline let fd: Int32
  @usableFromInline let maxLineBytes: Int
  @usableFromInline let quotedLineBreaks: Bool
  @usableFromInline let capacity: Int
  @usableFromInline let buf: UnsafeMutablePointer<UInt8>
  private let ownsBuffer: Bool
  @usableFromInline @exclusivity(unchecked) var start = 0
  @usableFromInline @exclusivity(unchecked) var end = 0
  /// Where the search for the record's end resumes, and whether it is
  /// inside a quoted field there.
  @usableFromInline @exclusivity(unchecked) var scan = 0
  @usableFromInline @exclusivity(unchecked) var inQuotes = false
  @usableFromInline @exclusivity(unchecked) var breaksInRecord = 0
  @usableFromInline @exclusivity(unchecked) var nextLine = 1
  @usableFromInline @exclusivity(unchecked) var eof = false

  /// Reads `fd` (not closed by the reader); records longer than
  /// `maxLineBytes` are an error.
  package init(fd: Int32, maxLineBytes: Int, quotedLineBreaks: Bool = false) {
    self.fd = fd
    self.maxLineBytes = maxLineBytes
    self.quotedLineBreaks = quotedLineBreaks
    capacity = max(maxLineBytes + 2, 1 << 16)
    buf = .allocate(capacity: capacity)
    ownsBuffer = true
  }

  /// Reads the `count` bytes at `bytes` (a whole chunk of records, which
  /// the caller keeps valid while the reader lives and deallocates)
  /// instead of a file: the parallel trace reader's workers parse chunks in
  /// memory with the same code. Lines are numbered from 1 within the chunk.
  package init(borrowing bytes: UnsafeMutablePointer<UInt8>, count: Int, maxLineBytes: Int, quotedLineBreaks: Bool = false) {
    fd = -1
    ownsBuffer = false
    self.maxLineBytes = maxLineBytes
    self.quotedLineBreaks = quotedLineBreaks
    capacity = count
    buf = bytes
    end = count
    eof = true
  }

  /// Continues a reader of a file from byte `offset` (a record start),
  /// numbering the next record `line` (the sequential reader taking over
  /// from the parallel one at a chunk boundary).
  ///
  /// - Precondition: nothing read yet, `fd` a regular file.
  package func resume(atByte offset: Int, line: Int) throws(Failure) {
    precondition(end == 0 && !eof, "LineReader.resume after reading")
    if lseek(fd, off_t(offset), SEEK_SET) < 0 {
      throw Failure.readError(line: line, message: String(cString: strerror(errno)))
    }
    bytesRead = offset
    nextLine = line
  }

  /// The line the next record starts on (after the end of the input: one
  /// past the last line).
  package var nextLineNumber: Int { nextLine }

  deinit { if ownsBuffer { buf.deallocate() } }

  /// The first `"` at or after `quoteFrom` (-1: none before `quoteEnd`),
  /// cached so that quote-free input costs one `memchr` per buffer fill,
  /// not one per line.
  @usableFromInline @exclusivity(unchecked) var quote = -1
  @usableFromInline @exclusivity(unchecked) var quoteFrom = 0
  @usableFromInline @exclusivity(unchecked) var quoteEnd = -1

  /// The position of the first `"` in `buf[i..<end]`, if any.
  @inlinable func nextQuote(_ i: Int) -> Int? {
    if i >= quoteFrom, quote >= i || (quote == -1 && quoteEnd == end) { return quote == -1 ? nil : quote }
    quoteFrom = i
    quoteEnd = end
    quote = memchr(buf + i, 34, end - i).map { UnsafeRawPointer(buf).distance(to: UnsafeRawPointer($0)) } ?? -1
    return quote == -1 ? nil : quote
  }

  /// Flips `inQuotes` for every `"` in `buf[from..<to]`.
  @inlinable func toggleQuotes(_ from: Int, _ to: Int) {
    var i = from
    while let q = nextQuote(i), q < to {
      inQuotes.toggle()
      i = q + 1
    }
  }

  /// The record from `start` to `stop` (its line end excluded), CR trimmed.
  @inlinable func take(upTo stop: Int, next: Int) throws(Failure) -> UnsafeBufferPointer<UInt8> {
    var e = stop
    if e > start && buf[e - 1] == 13 { e -= 1 }
    let s = UnsafeBufferPointer(start: buf + start, count: e - start)
    line = nextLine
    nextLine += 1 + breaksInRecord
    bytesRead += next - start
    start = next
    scan = next
    breaksInRecord = 0
    if s.count > maxLineBytes { throw .tooLong(line: line, limit: maxLineBytes) }
    return s
  }

  /// The next record when it is short and has no quote, found and split in
  /// one pass: its line break is among the 64 bytes at the read position
  /// (all already read) and no `"` comes before it. Returns the record
  /// (CR trimmed, as ``next()`` would) and a bit per comma in it (bit j:
  /// byte j is `,`). Returns nil, consuming nothing, for any other record
  /// (and near the end of the bytes read); ``next()`` then reads it.
  ///
  /// - Complexity: O(record length), eight bytes at a time; no call.
  @inlinable package func nextShort() throws(Failure) -> (record: UnsafeBufferPointer<UInt8>, commas: UInt64)? {
    guard scan == start, !inQuotes, end - start >= 64 else { return nil }
    let p = UnsafeRawPointer(buf + start)
    var commas: UInt64 = 0
    var quotes: UInt64 = 0
    var i = 0
    while i < 64 {
      let w = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
      let lf = ByteMask.equalBytes(w, 10)
      if lf != 0 {
        // The bytes before the first line break: 0x80 → 0x..FF below it.
        let before = ((lf & (0 &- lf)) >> 7) &- 1
        guard (quotes | ByteMask.equalBytes(w, 34) & before) == 0 else { return nil }
        commas |= ByteMask.bits(ByteMask.equalBytes(w, 44) & before) << UInt64(i)
        let nl = start + i + (lf.trailingZeroBitCount >> 3)
        return (try take(upTo: nl, next: nl + 1), commas)
      }
      quotes |= ByteMask.equalBytes(w, 34)
      commas |= ByteMask.bits(ByteMask.equalBytes(w, 44)) << UInt64(i)
      i += 8
    }
    return nil
  }

  /// The next record, or `nil` at the end of the input.
  @inlinable package func next() throws -> UnsafeBufferPointer<UInt8>? {
    while true {
      while scan < end, let p = memchr(buf + scan, 10, end - scan) {
        let nl = UnsafeRawPointer(buf).distance(to: UnsafeRawPointer(p))
        if quotedLineBreaks { toggleQuotes(scan, nl) }
        if !inQuotes { return try take(upTo: nl, next: nl + 1) }
        // A line break inside a quoted field: part of the record.
        breaksInRecord += 1
        scan = nl + 1
      }
      if quotedLineBreaks { toggleQuotes(scan, end) }
      scan = end
      if eof {
        guard start < end else { return nil }
        if inQuotes { throw Failure.unterminatedQuote(line: nextLine) }
        return try take(upTo: end, next: end)
      }
      if start > 0 {
        if end > start { memmove(buf, buf + start, end - start) }
        end -= start
        scan -= start
        quoteFrom -= start
        quoteEnd -= start
        if quote >= 0 { quote -= start }
        start = 0
      }
      if end == capacity {
        throw inQuotes ? Failure.unterminatedQuote(line: nextLine) : Failure.tooLong(line: nextLine, limit: maxLineBytes)
      }
      let n = read(fd, buf + end, capacity - end)
      if n < 0 {
        if errno == EINTR { continue }
        throw Failure.readError(line: nextLine, message: String(cString: strerror(errno)))
      }
      if n > 0, let onRead { onRead(UnsafeRawBufferPointer(start: buf + end, count: n)) }
      if n == 0 {
        eof = true
        try onEnd?()
        onEnd = nil
      }
      end += n
    }
  }
}
