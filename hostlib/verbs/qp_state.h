// The QP state machine of ibv_modify_qp (IBA 10.3.1, 11.2.5.2): which transitions a consumer may
// ask for, and for each the attributes it must give and may give, by transport, as the Linux
// kernel checks them before any provider sees the request (ib_modify_qp_is_ok).
#pragma once
#include <infiniband/verbs.h>

namespace ibemu::verbs {

struct TransitionRule {
  bool valid = false;
  int required = 0;  // besides IBV_QP_STATE
  int optional = 0;
};

TransitionRule Transition(ibv_qp_type type, ibv_qp_state from, ibv_qp_state to);

// 0, or EINVAL when the transition is not allowed, a required attribute is missing, or one is
// given that the transition does not take. `mask` is ibv_modify_qp's attr_mask; without
// IBV_QP_STATE the QP stays in `from` (a modify within the state).
int CheckModify(ibv_qp_type type, ibv_qp_state from, const ibv_qp_attr& attr, int mask);

}  // namespace ibemu::verbs
