# Issue 30, item 6: the instructors' group no longer reads every learner's runs; course staff read their own
# courses' students' runs through their memberships (labs.runs.visibility.can_view), admins read all.

from django.db import migrations


def take_view_all_from_instructors(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    view_all = Permission.objects.filter(codename="view_all_submissions", content_type__app_label="labs")
    for group in Group.objects.filter(name="instructors"):
        group.permissions.remove(*view_all)


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('labs', '0014_submission_public_id'),
    ]

    operations = [
        migrations.RunPython(take_view_all_from_instructors, migrations.RunPython.noop),
    ]
