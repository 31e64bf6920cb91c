#include "runtime/argument_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace toolvfs {
namespace {

using ::testing::HasSubstr;

ConfigValue Json(const std::string& text) {
  Result<ConfigValue> value = ParseJsonValue(text);
  EXPECT_TRUE(value.ok()) << text;
  return value.ok() ? *value : ConfigValue();
}

ConfigValue::Object Parameters(const std::string& json) { return Json(json).as_object(); }

struct ValidCase {
  const char* name;
  const char* parameters;
  const char* arguments;
  const char* expected;  // compact JSON, keys sorted
};

class ValidArguments : public ::testing::TestWithParam<ValidCase> {};

TEST_P(ValidArguments, AreFilledAndCoerced) {
  const ValidCase& c = GetParam();
  Result<ConfigValue> checked = ValidateArguments(Parameters(c.parameters), Json(c.arguments));
  ASSERT_TRUE(checked.ok()) << checked.status().message();
  EXPECT_EQ(checked->ToJson(), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ValidArguments,
    ::testing::Values(
        ValidCase{"given", R"({"path":{"type":"string","required":true}})", R"({"path":"a b"})", R"({"path":"a b"})"},
        ValidCase{"null_is_empty", R"({})", "null", "{}"},
        ValidCase{"default", R"({"n":{"type":"integer","default":3}})", "{}", R"({"n":3})"},
        ValidCase{"optional_absent", R"({"n":{"type":"integer"}})", "{}", "{}"},
        ValidCase{"nested_default_in_given_object",
                  R"({"o":{"type":"object","properties":{"d":{"type":"integer","default":2},"x":{"type":"string"}}}})",
                  R"({"o":{"x":"y"}})", R"({"o":{"d":2,"x":"y"}})"},
        ValidCase{"nested_default_in_default",
                  R"({"o":{"type":"object","default":{},"properties":{"d":{"type":"boolean","default":true}}}})",
                  "{}", R"({"o":{"d":true}})"},
        ValidCase{"defaults_in_array_items",
                  R"({"a":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","default":"v"}}}}})",
                  R"({"a":[{},{"k":"w"}]})", R"({"a":[{"k":"v"},{"k":"w"}]})"},
        ValidCase{"string_as_integer", R"({"n":{"type":"integer"}})", R"({"n":"42"})", R"({"n":42})"},
        ValidCase{"string_as_array", R"({"a":{"type":"array"}})", R"({"a":"[1,\"x\"]"})", R"({"a":[1,"x"]})"},
        ValidCase{"string_as_object", R"({"o":{"type":"object"}})", R"({"o":"{\"k\":1}"})", R"({"o":{"k":1}})"},
        ValidCase{"string_as_boolean", R"({"b":{"type":"boolean"}})", R"({"b":"true"})", R"({"b":true})"},
        ValidCase{"string_type_stays_string", R"({"s":{"type":"string"}})", R"({"s":"42"})", R"({"s":"42"})"},
        ValidCase{"integer_is_a_number", R"({"x":{"type":"number"}})", R"({"x":2})", R"({"x":2})"},
        ValidCase{"type_list", R"({"x":{"type":["string","null"]}})", R"({"x":null})", R"({"x":null})"},
        ValidCase{"no_type_takes_anything", R"({"x":{}})", R"({"x":[1]})", R"({"x":[1]})"},
        ValidCase{"enum_member", R"({"m":{"type":"string","enum":["a","b"]}})", R"({"m":"b"})", R"({"m":"b"})"},
        ValidCase{"within_bounds", R"({"n":{"type":"integer","minimum":1,"maximum":3}})", R"({"n":3})", R"({"n":3})"},
        ValidCase{"bounds_after_coercion", R"({"n":{"type":"integer","minimum":1}})", R"({"n":"1"})", R"({"n":1})"},
        ValidCase{"length_in_code_points", R"({"s":{"type":"string","maxLength":2}})", R"({"s":"éé"})",
                  "{\"s\":\"\u00e9\u00e9\"}"},
        ValidCase{"pattern_is_unanchored", R"({"s":{"type":"string","pattern":"[0-9]+"}})", R"({"s":"v12"})",
                  R"({"s":"v12"})"},
        ValidCase{"distinct_items", R"({"a":{"type":"array","uniqueItems":true,"minItems":2}})", R"({"a":[1,"1"]})",
                  R"({"a":[1,"1"]})"}),
    [](const auto& test) { return std::string(test.param.name); });

struct InvalidCase {
  const char* name;
  const char* parameters;
  const char* arguments;
  const char* message;  // a substring of the one-line error
};

class InvalidArguments : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidArguments, AreRejectedWithOneLine) {
  const InvalidCase& c = GetParam();
  Result<ConfigValue> checked = ValidateArguments(Parameters(c.parameters), Json(c.arguments));
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(checked.status().message(), HasSubstr(c.message));
  EXPECT_EQ(checked.status().message().find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Table, InvalidArguments,
    ::testing::Values(
        InvalidCase{"unknown", R"({"verbose":{"type":"boolean"}})", R"({"verbos":true})", "unknown argument 'verbos'"},
        InvalidCase{"missing_required", R"({"path":{"type":"string","required":true}})", "{}",
                    "missing required argument 'path'"},
        InvalidCase{"nested_unknown", R"({"o":{"type":"object","properties":{"a":{}}}})", R"({"o":{"b":1}})",
                    "unknown argument 'o.b'"},
        InvalidCase{"nested_missing", R"({"o":{"type":"object","properties":{"a":{"required":true}}}})",
                    R"({"o":{}})", "missing required argument 'o.a'"},
        InvalidCase{"wrong_type", R"({"n":{"type":"integer"}})", R"({"n":"x"})",
                    R"(argument 'n' must be integer, got "x")"},
        InvalidCase{"coercion_to_wrong_type", R"({"n":{"type":"integer"}})", R"({"n":"[1]"})", "must be integer"},
        InvalidCase{"fraction_is_no_integer", R"({"n":{"type":"integer"}})", R"({"n":1.5})", "must be integer, got 1.5"},
        InvalidCase{"bool_is_no_string", R"({"s":{"type":"string"}})", R"({"s":true})", "must be string, got true"},
        InvalidCase{"item_type", R"({"a":{"type":"array","items":{"type":"string"}}})", R"({"a":["x",2]})",
                    "argument 'a[1]' must be string"},
        InvalidCase{"not_in_enum", R"({"m":{"enum":["a","b"]}})", R"({"m":"c"})", R"(must be one of ["a","b"])"},
        InvalidCase{"below_minimum", R"({"n":{"type":"integer","minimum":1}})", R"({"n":0})",
                    "argument 'n' must be >= 1 (minimum), got 0"},
        InvalidCase{"above_maximum", R"({"x":{"type":"number","maximum":0.5}})", R"({"x":0.75})",
                    "argument 'x' must be <= 0.5 (maximum), got 0.75"},
        InvalidCase{"at_exclusive_minimum", R"({"n":{"exclusiveMinimum":0}})", R"({"n":0})",
                    "must be > 0 (exclusiveMinimum)"},
        InvalidCase{"at_exclusive_maximum", R"({"n":{"exclusiveMaximum":10}})", R"({"n":10})",
                    "must be < 10 (exclusiveMaximum)"},
        InvalidCase{"too_short", R"({"s":{"type":"string","minLength":3}})", R"({"s":"ab"})",
                    "argument 's' must have at least 3 characters (minLength), got 2"},
        InvalidCase{"too_long", R"({"s":{"maxLength":1}})", R"({"s":"éé"})",
                    "must have at most 1 characters (maxLength), got 2"},
        InvalidCase{"pattern_mismatch", R"({"s":{"type":"string","pattern":"^[a-z]+$"}})", R"({"s":"ab1"})",
                    R"(argument 's' must match the pattern '^[a-z]+$', got "ab1")"},
        InvalidCase{"invalid_pattern", R"({"s":{"pattern":"a("}})", R"({"s":"a"})",
                    "is not a valid regular expression"},
        InvalidCase{"too_few_items", R"({"a":{"minItems":1}})", R"({"a":[]})", "must have at least 1 items (minItems)"},
        InvalidCase{"too_many_items", R"({"a":{"maxItems":1}})", R"({"a":[1,2]})", "must have at most 1 items"},
        InvalidCase{"repeated_items", R"({"a":{"uniqueItems":true}})", R"({"a":[{"k":1},2,{"k":1}]})",
                    "items 0 and 2 are both {\"k\":1}"},
        InvalidCase{"nested_bound", R"({"a":{"items":{"minimum":0}}})", R"({"a":[1,-1]})", "argument 'a[1]' must be >= 0"},
        InvalidCase{"bad_default", R"({"n":{"type":"integer","default":"x"}})", "{}", "argument 'n' must be integer"},
        InvalidCase{"not_an_object", R"({})", "[1]", "must be a JSON object"}),
    [](const auto& test) { return std::string(test.param.name); });

TEST(ParseJsonValue, KeepsIntegersAndRejectsNonJson) {
  EXPECT_TRUE(Json("7").is_integer());
  EXPECT_TRUE(Json("7.5").is_float());
  EXPECT_FALSE(ParseJsonValue("{nope").ok());
}

}  // namespace
}  // namespace toolvfs
