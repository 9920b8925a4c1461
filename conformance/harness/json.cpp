#include "json.h"

#include <cstdio>
#include <cstdlib>

namespace conf::json {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

const Value* Value::Find(std::string_view key) const {
  for (const auto& [k, v] : object)
    if (k == key) return &v;
  return nullptr;
}

std::string Value::StringOr(std::string_view key, std::string fallback) const {
  const Value* v = Find(key);
  if (v && v->kind == Kind::String) return v->string;
  return fallback;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : text_(t) {}

  std::optional<Value> ParseDocument(std::string* error) {
    auto v = ParseValue();
    SkipSpace();
    if (v && pos_ != text_.size()) Fail("trailing characters");
    if (!error_.empty()) {
      if (error) *error = error_ + " at offset " + std::to_string(pos_);
      return std::nullopt;
    }
    return v;
  }

 private:
  void Fail(const std::string& what) {
    if (error_.empty()) error_ = what;
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  std::optional<std::string> ParseString() {
    if (!Eat('"')) {
      Fail("expected string");
      return std::nullopt;
    }
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (pos_ + 4 > text_.size()) {
            Fail("bad \\u escape");
            return std::nullopt;
          }
          unsigned cp = static_cast<unsigned>(std::strtoul(std::string(text_.substr(pos_, 4)).c_str(), nullptr, 16));
          pos_ += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: out += e;
      }
    }
    Fail("unterminated string");
    return std::nullopt;
  }

  std::optional<Value> ParseValue() {
    if (++depth_ > 64) {
      Fail("nesting too deep");
      return std::nullopt;
    }
    SkipSpace();
    Value v;
    if (pos_ >= text_.size()) {
      Fail("unexpected end");
      return std::nullopt;
    }
    char c = text_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Value::Kind::Object;
      if (!Eat('}')) {
        do {
          auto key = ParseString();
          if (!key || !Eat(':')) {
            Fail("expected key");
            return std::nullopt;
          }
          auto item = ParseValue();
          if (!item) return std::nullopt;
          v.object.emplace_back(std::move(*key), std::move(*item));
        } while (Eat(','));
        if (!Eat('}')) {
          Fail("expected }");
          return std::nullopt;
        }
      }
    } else if (c == '[') {
      ++pos_;
      v.kind = Value::Kind::Array;
      if (!Eat(']')) {
        do {
          auto item = ParseValue();
          if (!item) return std::nullopt;
          v.array.push_back(std::move(*item));
        } while (Eat(','));
        if (!Eat(']')) {
          Fail("expected ]");
          return std::nullopt;
        }
      }
    } else if (c == '"') {
      auto s = ParseString();
      if (!s) return std::nullopt;
      v.kind = Value::Kind::String;
      v.string = std::move(*s);
    } else if (Literal("true")) {
      v.kind = Value::Kind::Bool;
      v.boolean = true;
    } else if (Literal("false")) {
      v.kind = Value::Kind::Bool;
    } else if (Literal("null")) {
      v.kind = Value::Kind::Null;
    } else {
      const char* begin = text_.data() + pos_;
      std::string tmp(begin, std::min<size_t>(64, text_.size() - pos_));
      char* end = nullptr;
      v.number = std::strtod(tmp.c_str(), &end);
      if (end == tmp.c_str()) {
        Fail("unexpected character");
        return std::nullopt;
      }
      v.kind = Value::Kind::Number;
      pos_ += static_cast<size_t>(end - tmp.c_str());
    }
    --depth_;
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Value> Parse(std::string_view text, std::string* error) { return Parser(text).ParseDocument(error); }

}  // namespace conf::json
