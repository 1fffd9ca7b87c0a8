#include "hostlib/verbs/qp_state.h"

#include <cerrno>

namespace ibemu::verbs {
namespace {

constexpr int kInitAttrs = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr int kUdInitAttrs = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;

}  // namespace

TransitionRule Transition(ibv_qp_type type, ibv_qp_state from, ibv_qp_state to) {
  bool ud = type == IBV_QPT_UD;
  bool rc = type == IBV_QPT_RC;
  TransitionRule r;
  // Every state but Reset may go to Reset or Error, with nothing else given; Reset only to
  // Reset or Init.
  if (to == IBV_QPS_RESET || (to == IBV_QPS_ERR && from != IBV_QPS_RESET)) {
    r.valid = true;
    return r;
  }
  switch (from) {
    case IBV_QPS_RESET:
      if (to == IBV_QPS_INIT) {
        r.valid = true;
        r.required = ud ? kUdInitAttrs : kInitAttrs;
      }
      break;
    case IBV_QPS_INIT:
      if (to == IBV_QPS_INIT) {
        r.valid = true;
        r.optional = ud ? kUdInitAttrs : kInitAttrs;
      } else if (to == IBV_QPS_RTR) {
        r.valid = true;
        if (ud) {
          r.optional = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
        } else {
          r.required = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
          if (rc) r.required |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
          r.optional = IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
        }
      }
      break;
    case IBV_QPS_RTR:
      if (to == IBV_QPS_RTS) {
        r.valid = true;
        r.required = IBV_QP_SQ_PSN;
        if (rc)
          r.required |=
              IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
        if (ud)
          r.optional = IBV_QP_CUR_STATE | IBV_QP_QKEY;
        else
          r.optional = IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
                       IBV_QP_PATH_MIG_STATE | (rc ? IBV_QP_MIN_RNR_TIMER : 0);
      }
      break;
    case IBV_QPS_RTS:
    case IBV_QPS_SQD:
    case IBV_QPS_SQE:
      if (to == IBV_QPS_RTS) {
        r.valid = true;
        if (ud)
          r.optional = IBV_QP_CUR_STATE | IBV_QP_QKEY;
        else if (from == IBV_QPS_SQE)
          r.optional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS;
        else
          r.optional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
                       IBV_QP_PATH_MIG_STATE | (rc ? IBV_QP_MIN_RNR_TIMER : 0);
      } else if (to == IBV_QPS_SQD && from != IBV_QPS_SQE) {
        r.valid = true;
        if (from == IBV_QPS_RTS) {
          r.optional = IBV_QP_EN_SQD_ASYNC_NOTIFY;
        } else if (ud) {
          r.optional = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
        } else if (rc) {
          r.optional = IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
                       IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
                       IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE;
        } else {
          r.optional = IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
                       IBV_QP_PATH_MIG_STATE;
        }
      }
      break;
    case IBV_QPS_ERR:
    default:
      break;
  }
  return r;
}

int CheckModify(ibv_qp_type type, ibv_qp_state from, const ibv_qp_attr& attr, int mask) {
  // The caller's claim of the current state is what is checked, as the drivers take it; it may
  // only be made from RTR, RTS, SQD or SQE.
  if (mask & IBV_QP_CUR_STATE) {
    if (from != IBV_QPS_RTR && from != IBV_QPS_RTS && from != IBV_QPS_SQD && from != IBV_QPS_SQE)
      return EINVAL;
    from = attr.cur_qp_state;
  }
  ibv_qp_state to = mask & IBV_QP_STATE ? attr.qp_state : from;
  TransitionRule r = Transition(type, from, to);
  if (!r.valid) return EINVAL;
  int given = mask & ~IBV_QP_STATE;
  int allowed = r.required | r.optional;
  if ((given & r.required) != r.required) return EINVAL;
  if (given & ~allowed) return EINVAL;
  return 0;
}

}  // namespace ibemu::verbs
