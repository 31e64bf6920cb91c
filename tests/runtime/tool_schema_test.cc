#include "runtime/tool_schema.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/argument_validation.h"

namespace toolvfs {
namespace {

ConfigValue::Object Parameters(const std::string& json) {
  Result<ConfigValue> value = ParseJsonValue(json);
  EXPECT_TRUE(value.ok()) << json;
  return value.ok() && value->is_object() ? value->as_object() : ConfigValue::Object();
}

struct SchemaCase {
  const char* name;
  const char* parameters;
  const char* expected;  // compact JSON, keys sorted
};

class InputSchemaConversion : public ::testing::TestWithParam<SchemaCase> {};

TEST_P(InputSchemaConversion, GivesJsonSchema) {
  const SchemaCase& c = GetParam();
  EXPECT_EQ(InputSchemaJson(Parameters(c.parameters)), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Table, InputSchemaConversion,
    ::testing::Values(
        SchemaCase{"no_parameters_is_free_form", "{}", R"({"type":"object"})"},
        SchemaCase{"required_flags_become_an_array",
                   R"({"path":{"type":"string","required":true,"description":"Project path"},
                       "depth":{"type":"integer","default":2,"minimum":0,"maximum":9},
                       "mode":{"type":"string","required":true,"enum":["a","b"]}})",
                   R"({"additionalProperties":false,"properties":{"depth":{"default":2,"maximum":9,"minimum":0,)"
                   R"("type":"integer"},"mode":{"enum":["a","b"],"type":"string"},"path":{"description":)"
                   R"("Project path","type":"string"}},"required":["mode","path"],"type":"object"})"},
        SchemaCase{"required_false_is_dropped", R"({"n":{"type":"number","required":false}})",
                   R"({"additionalProperties":false,"properties":{"n":{"type":"number"}},"type":"object"})"},
        SchemaCase{"nested_object_properties",
                   R"({"o":{"type":"object","properties":{"k":{"type":"string","required":true},"d":{"default":1}}}})",
                   R"({"additionalProperties":false,"properties":{"o":{"additionalProperties":false,"properties":)"
                   R"({"d":{"default":1},"k":{"type":"string"}},"required":["k"],"type":"object"}},"type":"object"})"},
        SchemaCase{"array_items_are_converted",
                   R"({"a":{"type":"array","minItems":1,"items":{"type":"object","properties":{"x":{"required":true}}}}})",
                   R"({"additionalProperties":false,"properties":{"a":{"items":{"additionalProperties":false,)"
                   R"("properties":{"x":{}},"required":["x"],"type":"object"},"minItems":1,"type":"array"}},)"
                   R"("type":"object"})"},
        SchemaCase{"type_list_is_kept", R"({"o":{"type":["object","null"],"properties":{}}})",
                   R"({"additionalProperties":false,"properties":{"o":{"additionalProperties":false,)"
                   R"("properties":{},"type":["object","null"]}},"type":"object"})"},
        SchemaCase{"object_without_properties_stays_open", R"({"o":{"type":"object"}})",
                   R"({"additionalProperties":false,"properties":{"o":{"type":"object"}},"type":"object"})"},
        SchemaCase{"other_keywords_pass_through",
                   R"({"s":{"type":"string","pattern":"^a","minLength":1,"format":"uri","title":"S","examples":["a"]}})",
                   R"({"additionalProperties":false,"properties":{"s":{"examples":["a"],"format":"uri",)"
                   R"("minLength":1,"pattern":"^a","title":"S","type":"string"}},"type":"object"})"}),
    [](const ::testing::TestParamInfo<SchemaCase>& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace toolvfs
