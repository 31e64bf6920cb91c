#include "project/sql/sql_connection.h"

#include <cctype>

namespace toolvfs {

Status SqlCursor::ForEachIntTextRow(IntTextRowVisitor& visitor) {
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return OkStatus();
    visitor.Row(Int(0), Text(1));
  }
}

Status SqlStatement::Run() {
  while (true) {
    TOOLVFS_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return OkStatus();
  }
}

Result<int64_t> SqlStatement::InsertedId() {
  TOOLVFS_ASSIGN_OR_RETURN(bool row, Step());
  if (!row) return InternalError("An insert into the store returned no id");
  return Int(0);
}

Result<SqlTransaction> SqlTransaction::Begin(SqlConnection& connection, SqlTransactionKind kind) {
  TOOLVFS_RETURN_IF_ERROR(connection.Begin(kind));
  return SqlTransaction(connection);
}

Status SqlTransaction::Commit() {
  TOOLVFS_RETURN_IF_ERROR(connection_->Commit());
  connection_ = nullptr;
  return OkStatus();
}

SqlLease::~SqlLease() {
  if (connection_) database_->GiveBack(std::move(connection_));
}

Status SqlDatabase::RunWriteTransaction(const std::function<Status(SqlConnection&)>& body) {
  TOOLVFS_ASSIGN_OR_RETURN(SqlLease connection, Connect());
  TOOLVFS_ASSIGN_OR_RETURN(SqlTransaction transaction,
                           SqlTransaction::Begin(*connection, SqlTransactionKind::kWrite));
  TOOLVFS_RETURN_IF_ERROR(body(*connection));
  return transaction.Commit();
}

std::string RewritePlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] == '?' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += '$';
    } else {
      out += sql[i];
    }
  }
  return out;
}

}  // namespace toolvfs
