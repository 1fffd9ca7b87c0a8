// Every attribute the MAD library knows, by (class, attribute ID): its name, where its data
// starts in the MAD and its fields, so that one generic routine can print or check any MAD.
#pragma once
#include <span>
#include <string>

#include "common/mad/field.h"

namespace ibemu::mad {

struct AttributeLayout {
  const char* name;
  uint8_t mgmt_class;  // kSubnLid also stands for kSubnDirected (same attributes)
  uint16_t id;
  int data_offset;  // from MAD byte 0
  int data_bytes;
  std::span<const Field* const> fields;  // empty for tables (printed as bytes)
};

// Null for an attribute the library does not describe.
const AttributeLayout* FindAttribute(uint8_t mgmt_class, uint16_t attr_id);

// A readable dump of a whole MAD: header, then the attribute's fields (or its bytes).
std::string DescribeMad(const uint8_t* mad);

}  // namespace ibemu::mad
